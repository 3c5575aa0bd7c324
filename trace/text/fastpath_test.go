package text

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// readLog reads all of src and logs every event and the final error and
// tables, so that two readers can be compared.
func readLog(src string, ext, slowOnly bool) string {
	r := newReader(strings.NewReader(src), "f", ext)
	r.slowOnly = slowOnly
	var sb strings.Builder
	for {
		var e trace.Event
		err := r.next(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintf(&sb, "error %v\n", err)
			break
		}
		fmt.Fprintf(&sb, "%+v\n", e)
	}
	m := r.meta
	fmt.Fprintf(&sb, "%+v\n%+v\n%+v\n", m.Sites, m.Goroutines, m.Names)
	return sb.String()
}

var fastPathCases = []string{
	"T1|r(V1)|12\nT2|w(V1)|13\r\nT1|acq(L0)|\nT2|fork(T3)|5\nT3|begin|6\nT3|end()|7\nT0|join(T3)|8",
	"T1|r(x=5)|a.go:3\nT1|w(0x10=0x20)\nT1|r(\"0x10\")\nT1|r(x=)|1\nT1|r(=1)|1",
	"T1 |r(x)|1\nT1| r(x)|1\nT1|r (x)|1\nT1|r( x)|1\nT1|r(x )|1\nT1|r(x) |1\nT1|r(x)| 1\nT1|r(x =1)|1\nT1|r(x= 1)\n",
	"T1|acq(a=b)|1\nT1|r(x)|a=b\nT1|r(x)|Foo(1)\nf(1)|r(x)|1\nT1|r(f(x))|1\nT1|r(x)|1|2\n|r(x)|1\nT1||1",
	"T1|snd(c)|1\nT1|call(m;x)|1\nT1|rbegin(r)\n#!g T9 id=4\nT9|r(\"q\")|\"l\"\n# c\n\nT1|racq(l)",
}

func TestFastPathAgreesWithGeneralParser(t *testing.T) {
	for _, src := range fastPathCases {
		for _, ext := range []bool{false, true} {
			if fast, slow := readLog(src, ext, false), readLog(src, ext, true); fast != slow {
				t.Errorf("ext=%v %q:\nfast path:\n%s\ngeneral parser:\n%s", ext, src, fast, slow)
			}
		}
	}
}

// FuzzFastPath checks that the fast path changes nothing: on any input,
// reading with it gives the events, error and tables of reading without.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastPathCases {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, ext bool) {
		if fast, slow := readLog(src, ext, false), readLog(src, ext, true); fast != slow {
			t.Fatalf("ext=%v %q:\nfast path:\n%s\ngeneral parser:\n%s", ext, src, fast, slow)
		}
	})
}

func TestSplitNum(t *testing.T) {
	pack := func(s string) uint64 {
		var p uint64
		for i := 0; i < len(s); i++ {
			p |= uint64(s[i]) << (8 * i)
		}
		return p | uint64(len(s))<<56
	}
	for _, c := range []struct {
		tok    string
		prefix uint64
		n      int
		ok     bool
	}{
		{"V123", pack("V"), 123, true},
		{"12345", pack(""), 12345, true},
		{"0", pack(""), 0, true},
		{"Tx_0", pack("Tx_"), 0, true},
		{"abcdefg9", pack("abcdefg"), 9, true},
		{"abcdefgh9", 0, 0, false}, // prefix too long to pack
		{"V007", 0, 0, false},      // not canonical: V7 is another token
		{"V", 0, 0, false},
		{"", 0, 0, false},
		{"V1x", 0, 0, false},
		{"V1234567890", 0, 0, false}, // too many digits
		{"V999999999", pack("V"), 999999999, true},
	} {
		p, n, ok := splitNum([]byte(c.tok))
		if p != c.prefix || n != c.n || ok != c.ok {
			t.Errorf("splitNum(%q) = %#x, %d, %v; want %#x, %d, %v", c.tok, p, n, ok, c.prefix, c.n, c.ok)
		}
	}
}

// Tokens kept in number slices and in the map are one table: a token is
// found wherever it was put, and a far number goes to the map.
func TestTokenTable(t *testing.T) {
	tt := newTokenTable[int]()
	toks := []string{"V1", "V2", "V100000", "x", "L1", "1", "V01"}
	for i, tok := range toks {
		if _, ok := tt.get([]byte(tok)); ok {
			t.Fatalf("%q found before put", tok)
		}
		tt.put(tok, i)
	}
	for i, tok := range toks {
		if v, ok := tt.get([]byte(tok)); !ok || v != i {
			t.Errorf("get(%q) = %d, %v; want %d", tok, v, ok, i)
		}
	}
	if _, ok := tt.byName["V100000"]; !ok {
		t.Errorf("V100000 (beyond the slice's slack) is not in the map")
	}
	if want := map[string]int{"V100000": 2, "x": 3, "V01": 6}; !reflect.DeepEqual(tt.byName, want) {
		t.Errorf("map holds %v, want %v", tt.byName, want)
	}
}
