package truth

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseComment(t *testing.T) {
	tests := []struct {
		text string
		want []Marker
	}{
		{"// plain comment", nil},
		{"//racekit:atomic", nil}, // the front end's directive, no marker
		{"//racekit:race id=acct1 kind=race benign=false",
			[]Marker{{IDs: []string{"acct1"}, Kind: KindRace}}},
		{"// racekit:race id=a,b-2 kind=atomicity benign=true self flaky note=stats",
			[]Marker{{IDs: []string{"a", "b-2"}, Kind: KindAtomicity, Benign: true, Self: true, Flaky: true, Note: "stats"}}},
		{`// racekit:norace id=h1 why="ordered by the channel send"`,
			[]Marker{{NoRace: true, IDs: []string{"h1"}, Why: "ordered by the channel send"}}},
		{"// racekit:race id=r1 kind=atomic-set benign=false racekit:norace id=n1 why=barrier self",
			[]Marker{
				{IDs: []string{"r1"}, Kind: KindAtomicSet},
				{NoRace: true, IDs: []string{"n1"}, Why: "barrier", Self: true},
			}},
	}
	for _, tt := range tests {
		got, err := ParseComment(tt.text)
		if err != nil {
			t.Errorf("ParseComment(%q): %v", tt.text, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseComment(%q) = %+v, want %+v", tt.text, got, tt.want)
		}
	}
}

func TestParseCommentErrors(t *testing.T) {
	tests := []struct{ text, err string }{
		{"// racekit:", `unknown marker "racekit:"`},
		{"// racekit:races id=a", `unknown marker "racekit:races"`},
		{"// racekit:race id=a kind=race", "missing benign"},
		{"// racekit:race kind=race benign=false", "missing id"},
		{"// racekit:norace id=a", "missing why"},
		{"// racekit:race id=a kind=deadlock benign=false", `unknown kind "deadlock"`},
		{"// racekit:race id=a kind=race benign=yes", `benign="yes"`},
		{"// racekit:race id=a kind=race benign=1", `benign="1"`},
		{"// racekit:race id=A kind=race benign=false", `bad id "A"`},
		{"// racekit:race id=a,,b kind=race benign=false", `bad id ""`},
		{"// racekit:race id=a,a kind=race benign=false", `id "a" listed twice`},
		{"// racekit:race id=a id=b kind=race benign=false", "id given twice"},
		{"// racekit:race id=a kind=race benign=false why=x", `unknown key "why"`},
		{"// racekit:norace id=a why=x flaky", `unknown flag "flaky"`},
		{"// racekit:norace id=a why=x kind=race", `unknown key "kind"`},
		{`// racekit:norace id=a why="x`, "unterminated or invalid quoted value"},
		{`// racekit:norace id=a why=""`, "empty why"},
		{`// racekit:norace id=a why="x"y`, "text after quoted value"},
		{`// racekit:norace id=a "why"`, "unexpected quote"},
		{"// racekit:race id=a kind=race benign=false bogus", `unknown flag "bogus"`},
	}
	for _, tt := range tests {
		_, err := ParseComment(tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseComment(%q) error = %v, want one containing %q", tt.text, err, tt.err)
		}
	}
}

func TestMarkerStringRoundTrip(t *testing.T) {
	ms := []Marker{
		{IDs: []string{"x"}, Kind: KindRace},
		{IDs: []string{"x", "y.z"}, Kind: KindAtomicity, Benign: true, Self: true, Flaky: true, Note: "two words"},
		{NoRace: true, IDs: []string{"n"}, Why: `says "safe"`},
	}
	want := []string{
		"racekit:race id=x kind=race benign=false",
		`racekit:race id=x,y.z kind=atomicity benign=true note="two words" self flaky`,
		`racekit:norace id=n why="says \"safe\""`,
	}
	for i, m := range ms {
		s := m.String()
		if s != want[i] {
			t.Errorf("String() = %s, want %s", s, want[i])
		}
		back, err := ParseComment("// " + s)
		if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], m) {
			t.Errorf("ParseComment(%s) = %+v, %v; want %+v", s, back, err, m)
		}
	}
}

// FuzzParseComment: any comment parses or fails without panicking, and a
// parsed marker prints to text that parses back to the same marker.
func FuzzParseComment(f *testing.F) {
	for _, s := range []string{
		"// racekit:race id=a kind=race benign=false",
		"// racekit:race id=a,b kind=atomic-set benign=true self flaky note=\"x y\"",
		"// racekit:norace id=n why=\"a\\tb\" self racekit:race id=q kind=race benign=false",
		"// racekit:norace id=n why=x\"",
		"//racekit:",
		"// not a marker",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := ParseComment(text)
		if err != nil {
			return
		}
		for _, m := range ms {
			back, err := ParseComment("// " + m.String())
			if err != nil {
				t.Fatalf("%q: reparse of %q: %v", text, m.String(), err)
			}
			if len(back) != 1 || !reflect.DeepEqual(back[0], m) {
				t.Fatalf("%q: %q reparsed as %+v, want %+v", text, m.String(), back, m)
			}
		}
	})
}
