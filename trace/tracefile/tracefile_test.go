package tracefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
	"github.com/racekit/racekit/trace/text"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		prefix string
		want   Format
	}{
		{rkt.Magic, Binary},
		{rkt.Magic[:3], Binary}, // a header cut short is still binary: its reader says so
		{"T1|r(x)|1\n", Text},
		{"", Text},
		{"\x89PNG", Text},
	} {
		if got := Sniff([]byte(c.prefix)); got != c.want {
			t.Errorf("Sniff(%q) = %s, want %s", c.prefix, got, c.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"rkt": Binary, ".rkt": Binary, "STD": STD, "rapid": STD, "rktx": Text, "text": Text} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %s, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("csv accepted")
	}
	if FormatOfPath("a/b.std") != STD || FormatOfPath("x.json") != "" {
		t.Error("FormatOfPath")
	}
}

// Every format round-trips through Create and Open.
func TestCreateOpenEachFormat(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "a.go:1")
	b.Write("T1", "x", "a.go:2")
	b.Read("main", "x", "a.go:3")
	src := b.Trace()
	for _, f := range []Format{Binary, STD, Text} {
		path := filepath.Join(t.TempDir(), "t."+string(f))
		w, err := Create(path, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := trace.Copy(w, src.Iter()); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: close: %v", f, err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := trace.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		evs := got.Events
		if f == STD {
			// main has no fork: read as RAPID means it, the STD root forks it.
			if len(evs) == 0 || evs[0].Op != trace.OpFork || got.M.Goroutine(evs[0].G).Name != text.STDRootName {
				t.Errorf("STD: no fork of main by the root first: %+v", evs)
				continue
			}
			evs = evs[1:]
		}
		if r.Format != f || len(evs) != 3 || evs[1].Op != trace.OpWrite || got.M.NameOf(evs[1].Obj) != "x" {
			t.Errorf("%s: read back format %s, events %+v", f, r.Format, evs)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.rkt")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
