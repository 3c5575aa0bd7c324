package text

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/racekit/racekit/trace"
)

// readLog reads all of src and logs every event and the final error and
// tables, so that two readers can be compared.
func readLog(src string, ext, slowOnly bool) string {
	return readLogFrom(strings.NewReader(src), ext, slowOnly)
}

func readLogFrom(in io.Reader, ext, slowOnly bool) string {
	r := newReader(in, "f", ext)
	r.slowOnly = slowOnly
	// The line cache is part of the fast path: use it from the first line,
	// small, so that lines also evict each other.
	r.lines.after, r.lines.bits = 0, 2
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
	// Tokens longer than a word or a key; '|' in a long location.
	"a-very-long-thread-name|r(a-very-long-variable-name)|some/long/path/to/a/file.go:123:45\n" +
		"a-very-long-thread-name|w(a-very-long-variable-name=0x10)|some/long/path/to/a/file.go:123:45\n" +
		"T1|r(x)|some/long/path/to/a|file.go:1\nT1|r(x)|a|b\nT1|r(abcdefghij(k)|1\nT1|r(abcdefghij|k)|1",
	// Values and '=' where they are not values; quotes in STD.
	"T1|r(x=5=6)|1\nT1|acq(m=1)|1\nT1|fork(T2=1)|1\nT1|r(abcdefgh=5)|1\nT1|r(abcdefghijk=0x5)\n\"q\"|r(x)|1\nT1|r(\"x\")|1\nT1|r(x)|a\"b",
	// Whitespace at every token end; begin and end forms.
	"T1\t|r(x)|1\nT1|r(x)|\t1\nT1|r(x)|1\t\nT1|r(\tx)|1\nT1|r(x\v)|1\nT1|r(x= 5)\nT1|begin|1\nT1|begin()|1\nT1|begin(x)|1\nT1|end\nT1|end|\n",
	// Repeated lines, through the line cache (4 slots: they evict each other).
	strings.Repeat("T1|r(V1)|12\nT0|fork(T1)|5\nT2|w(V1=7)|a.go:1\nT2|acq(L1)|13\nT0|join(T1)|6\n#!seq 3\nT3|rel(L1)|a/b/c.go:1:2\n", 3),
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

// The fast path takes the lines that make up real traces; the general
// parser is for the rest.
func TestFastPathTakesCommonLines(t *testing.T) {
	for _, c := range []struct {
		ext  bool
		line string
	}{
		{false, "T1|r(V1)|12\n"},
		{false, "main|w(g5.l2)|synth/local.go:19\n"},
		{false, "T0|fork(T1)|5\r\n"},
		{false, "T1|acq(L0)|\n"},
		{false, "T1|begin|1"},
		{false, "a-very-long-thread-name|r(a-very-long-variable-name)|some/long/path/to/a/file.go:123:45\n"},
		{true, "T1|r(x=5)|a.go:3:4\n"},
		{true, "T1|w(0x10=0x20)\n"},
		{true, "T1|racq(l)\n"},
		{true, "T1|end\n"},
	} {
		r := newReader(strings.NewReader(""), "f", c.ext)
		var e trace.Event
		if !r.fastLine([]byte(c.line), &e) {
			t.Errorf("ext=%v: fast path refuses %q", c.ext, c.line)
		}
	}
}

// Input that arrives in small pieces splits lines across reads, and puts
// stale bytes after the input read so far: it reads the same.
func TestReadInPieces(t *testing.T) {
	for _, src := range fastPathCases {
		for _, ext := range []bool{false, true} {
			want := readLog(src, ext, true)
			for _, in := range []io.Reader{iotest.OneByteReader(strings.NewReader(src)), iotest.HalfReader(strings.NewReader(src))} {
				if got := readLogFrom(in, ext, false); got != want {
					t.Errorf("ext=%v %q through %T:\n%s\nwant\n%s", ext, src, in, got, want)
				}
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
	want := map[string]named[int]{"V100000": {"V100000", 2}, "x": {"x", 3}, "V01": {"V01", 6}}
	if !reflect.DeepEqual(tt.byName, want) {
		t.Errorf("map holds %v, want %v", tt.byName, want)
	}
}

// A key of a token of up to maxKeyed bytes is the whole token: changing
// any byte changes it. Tokens of the read buffer (with capacity beyond
// their end, holding other bytes) and exact-size copies get the same key.
func TestKeyIsWholeToken(t *testing.T) {
	line := []byte("abcdefghijklmnopqrstuvwxyz0123456789")
	for n := 1; n <= maxKeyed; n++ {
		tok := line[:n]
		k := keyOf(tok)
		if !k.whole() {
			t.Errorf("key of %d bytes is not whole", n)
		}
		if c := keyOf(append([]byte(nil), tok...)); c != k {
			t.Errorf("%q: key %+v in the buffer, %+v as a copy", tok, k, c)
		}
		for i := range n {
			m := append([]byte(nil), tok...)
			m[i] ^= 0x40
			if keyOf(m) == k {
				t.Errorf("%q and %q have the same key", tok, m)
			}
		}
	}
	if keyOf(line[:maxKeyed+1]).whole() {
		t.Errorf("key of %d bytes is whole", maxKeyed+1)
	}
}

// Long tokens whose keys are equal (same length, first 16 and last 8
// bytes) land in the same cache slot and are still told apart.
func TestTokenTableLongTokensWithEqualKeys(t *testing.T) {
	tt := newTokenTable[int]()
	// 26 bytes: 16 alike, 2 that differ, 8 alike.
	toks := []string{"synth/file.go:__aa_____:12", "synth/file.go:__bb_____:12", "synth/file.go:__cc_____:12"}
	for i, tok := range toks {
		if keyOf([]byte(tok)) != keyOf([]byte(toks[0])) {
			t.Fatalf("%q and %q have different keys", tok, toks[0])
		}
		tt.put(tok, i)
	}
	for range 2 { // the second round finds them in the cache, evicting each other
		for i, tok := range toks {
			if v, ok := tt.get([]byte(tok)); !ok || v != i {
				t.Errorf("get(%q) = %d, %v; want %d", tok, v, ok, i)
			}
		}
	}
	if _, ok := tt.get([]byte("synth/file.go:__dd_____:12")); ok {
		t.Errorf("a token never put was found")
	}
}

// peekLine finds the next line's length among the next 32 bytes, and
// keys the line by its bytes alone: not by what follows its newline, nor
// by stale bytes beyond the input read so far.
func TestPeekLine(t *testing.T) {
	peek := func(data string, end int) (int, lineKey, bool) {
		r := newReader(strings.NewReader(""), "f", false)
		r.buf = make([]byte, 64, 64+bufPad)
		copy(r.buf, data)
		r.end = end
		return r.peekLine()
	}
	long := "T1|r(V1)|synth/local.go:1234567" // 31 bytes
	for _, c := range []struct {
		data string
		end  int
		n    int
		ok   bool
	}{
		{"T1|r(V1)|12\nT2|w(x)|1\n", 22, 11, true},
		{"\nT1|r(V1)|12\n", 14, 0, true},
		{long + "\nT1", 35, 31, true},
		{long + "8\n", 33, -1, false},         // the newline is beyond 32 bytes
		{"T1|r(V1)|12\nstale", 11, 11, false}, // the newline is not read yet
	} {
		n, _, ok := peek(c.data, c.end)
		if ok != c.ok || ok && n != c.n {
			t.Errorf("%q (end %d): peekLine = %d, %v; want %d, %v", c.data, c.end, n, ok, c.n, c.ok)
		}
	}
	_, k1, _ := peek("T1|r(V1)|12\nT2|w(x)|1\n", 22)
	_, k2, _ := peek("T1|r(V1)|12\nT3|acq(L2)|1\n", 26)
	if k1 != k2 {
		t.Errorf("the line after changes the key: %x, %x", k1, k2)
	}
	_, kl, _ := peek(long+"\n", 32)
	for i := range len(long) {
		m := []byte(long)
		m[i] ^= 0x40
		if _, k, _ := peek(string(m)+"\n", 32); k == kl {
			t.Errorf("%q and %q have the same key", long, m)
		}
	}
}

// Repeated lines are served by the line cache, which is then part of the
// steady state: nothing is allocated per event.
func TestLineCacheServesRepeatedLines(t *testing.T) {
	src := strings.Repeat("T1|r(V1)|12\nT2|w(x)|a.go:3\nT1|acq(L0)|13\n", 600)
	r := newReader(strings.NewReader(src), "a.std", false)
	r.lines.after = 0
	var e trace.Event
	// Past the first read, which is small: the rest of the input is then
	// in the buffer, and every line can be looked up before it is split.
	for range 400 {
		if err := r.next(&e); err != nil {
			t.Fatal(err)
		}
	}
	tries, hits := r.lines.tries, r.lines.hits
	if allocs := testing.AllocsPerRun(1000, func() {
		if err := r.next(&e); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
	if r.lines.tries-tries != 1001 || r.lines.hits-hits != 1001 {
		t.Errorf("%d lookups, %d hits; want every one of 1001 lines a hit", r.lines.tries-tries, r.lines.hits-hits)
	}
}

// When lines stop repeating, the line cache turns itself off for a while,
// then tries again.
func TestLineCacheTurnsOffWithoutRepeats(t *testing.T) {
	var sb strings.Builder
	for i := range 100 { // unique lines
		fmt.Fprintf(&sb, "T%d|r(V%d)|%d\n", i%7, i, i%1000)
	}
	for range 100 { // one line, over and over
		sb.WriteString("T9|w(x)|a.go:1\n")
	}
	r := newReader(strings.NewReader(sb.String()), "a.std", false)
	r.lines.after, r.lines.window, r.lines.offFor = 0, 64, 50
	var e trace.Event
	for range 100 {
		if err := r.next(&e); err != nil {
			t.Fatal(err)
		}
	}
	// Line 1 is not read yet when the cache would look for it (nothing
	// is); lines 2-65 are 64 lookups without a hit.
	if r.lines.offTill != 65+50 {
		t.Errorf("off until line %d, want %d", r.lines.offTill, 65+50)
	}
	for r.next(&e) == nil {
	}
	// Lines 115 to 200 are looked up again; all but the first hit.
	if r.lines.tries != 200-115+1 || r.lines.hits != 200-115 {
		t.Errorf("%d lookups and %d hits after the pause, want %d and %d", r.lines.tries, r.lines.hits, 200-115+1, 200-115)
	}
}
