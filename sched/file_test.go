package sched

import (
	"strings"
	"testing"
)

func TestParsePair(t *testing.T) {
	p, err := ParsePair("a/b.go:5~/x/a/c.go:7:3")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		line int
		want bool
	}{
		{"/src/a/b.go", 5, true},
		{"a/b.go", 5, true},
		{"/src/xa/b.go", 5, false}, // not at a path boundary
		{"/src/a/b.go", 6, false},
		{"/x/a/c.go", 7, true},
		{"c.go", 7, false},
	} {
		if got := p.Matches(c.file, c.line); got != c.want {
			t.Errorf("Matches(%s, %d) = %v, want %v", c.file, c.line, got, c.want)
		}
	}
	for _, bad := range []string{"", "a.go:5", "a.go~b.go:3", "a.go:x~b.go:1"} {
		if _, err := ParsePair(bad); err == nil {
			t.Errorf("ParsePair(%q) accepted", bad)
		}
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	var b strings.Builder
	b.WriteString(FormatHeader("racefuzzer", 17, "a.go:1~a.go:2"))
	pts := []Point{{G: "g0", N: 0, Kind: KindLock, Site: "a.go:3"}, {G: "g0.1", N: 2, Kind: KindWrite, Site: "dir with space/a.go:2"}}
	for _, p := range pts {
		b.WriteString(FormatStep(p))
	}
	b.WriteString(FormatNote(Note{"race", FormatRace(pts[1], pts[0])}))
	b.WriteString("step\tg0\t1\tunl") // cut short by a crash
	s, err := ReadSchedule(strings.NewReader(b.String()), "f")
	if err != nil {
		t.Fatal(err)
	}
	if s.Strategy != "racefuzzer" || s.Seed != 17 || s.Pair != "a.go:1~a.go:2" || len(s.Steps) != 2 {
		t.Fatalf("%+v", s)
	}
	if s.Steps[1] != (Step{G: "g0.1", N: 2, Kind: KindWrite, Site: "dir with space/a.go:2"}) {
		t.Errorf("step %+v", s.Steps[1])
	}
	if r := s.NotesOf("race"); len(r) != 1 || !strings.Contains(r[0], "g0.1#2 w") {
		t.Errorf("race notes %v", r)
	}
	if _, err := ReadSchedule(strings.NewReader("hello\n"), "f"); err == nil || !strings.Contains(err.Error(), "f:1") {
		t.Errorf("bad magic: %v", err)
	}
}

func TestKindNames(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		if got, ok := ParseKind(k.String()); !ok || got != k {
			t.Errorf("kind %d: %q parses as %v", k, k.String(), got)
		}
	}
}

// DigestSteps agrees with DiffSteps: equal digests exactly when DiffSteps
// finds no difference, over every single-field change of a schedule.
func TestDigestSteps(t *testing.T) {
	base := []Step{
		{G: "g0", N: 1, Kind: KindWrite, Site: "a.go:3", Ev: 4, Obj: 0xc000010000},
		{G: "g0/1", N: 1, Kind: KindRead, Site: "a go:7", Ev: 2, Obj: 0xc000010000},
		{G: "g0", N: 2, Kind: KindRead, Site: "a.go:9", Ev: 6},
	}
	clone := func() []Step { return append([]Step(nil), base...) }
	variants := map[string][]Step{"same": clone()}
	mut := func(name string, f func(s []Step)) {
		s := clone()
		f(s)
		variants[name] = s
	}
	mut("obj", func(s []Step) { s[0].Obj = 0xc000020000 })
	mut("g", func(s []Step) { s[1].G = "g0/2" })
	mut("n", func(s []Step) { s[2].N = 3 })
	mut("kind", func(s []Step) { s[0].Kind = KindRead })
	mut("site", func(s []Step) { s[1].Site = "a.go:7" })
	mut("ev", func(s []Step) { s[2].Ev = 7 })
	mut("swap", func(s []Step) { s[0], s[1] = s[1], s[0] })
	variants["shorter"] = clone()[:2]
	variants["longer"] = append(clone(), base[2])
	d := DigestSteps(base)
	for name, v := range variants {
		same := DiffSteps(base, v) == ""
		if got := DigestSteps(v) == d; got != same {
			t.Errorf("%s: digests equal = %v, DiffSteps says same = %v", name, got, same)
		}
	}
	if DigestSteps(nil) == d {
		t.Error("the empty schedule has the digest of a non-empty one")
	}
}
