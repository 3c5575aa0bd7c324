package rkt

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// blockedFile is a small file whose block boundaries are known: it is
// flushed every few steps.
type blockedFile struct {
	data       []byte
	want       expectation
	boundaries []int // file length after the header and after each block
	eventsAt   []int // events a reader returns up to each boundary (a range's words)
	recordsAt  []int // event records in the file up to each boundary (warnings count them)
	metaAt     []counts
}

func makeBlockedFile(t *testing.T) blockedFile {
	steps := genScript(newRand(42), 90)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	f := blockedFile{want: expect(steps)}
	m := trace.NewMeta()
	words := 0
	mark := func() {
		if buf.Len() > 0 && (len(f.boundaries) == 0 || buf.Len() != f.boundaries[len(f.boundaries)-1]) {
			f.boundaries = append(f.boundaries, buf.Len())
			f.eventsAt = append(f.eventsAt, words)
			f.recordsAt = append(f.recordsAt, int(w.Events()))
			f.metaAt = append(f.metaAt, countsOf(m))
		}
	}
	must(t, w.Flush()) // the header alone
	mark()
	for i, s := range steps {
		must(t, writeStep(w, s))
		switch {
		case s.site != nil:
			_ = m.DefineSite(trace.SiteID(len(m.Sites)), *s.site)
		case s.gor != nil:
			_ = m.DefineGoroutine(*s.gor)
		case s.name != nil:
			m.SetName(s.name.Obj, s.name.Name)
		case s.event.Op.IsRange():
			words += int(trace.Span(s.event.Value).Words())
		case s.event.Flags&trace.FlagGoAtomic != 0:
			words += trace.GoAtomicSeqs
		default:
			words++
		}
		if i%7 == 6 {
			must(t, w.Flush())
			mark()
		}
	}
	must(t, w.Flush())
	mark()
	must(t, w.Close()) // the end block
	f.data = buf.Bytes()
	if len(f.boundaries) < 10 {
		t.Fatalf("only %d blocks", len(f.boundaries))
	}
	return f
}

// blockPrefix returns the number of events a reader returns from the
// whole blocks in the first n bytes, their Meta sizes, and where they end.
func (f *blockedFile) blockPrefix(n int) (int, counts, int) {
	i := f.blockIndex(n)
	return f.eventsAt[i], f.metaAt[i], f.boundaries[i]
}

// blockIndex is the index of the last boundary at or before n bytes.
func (f *blockedFile) blockIndex(n int) int {
	i := 0
	for i+1 < len(f.boundaries) && f.boundaries[i+1] <= n {
		i++
	}
	return i
}

func checkPrefix(t *testing.T, what string, got result, want expectation, n int) {
	t.Helper()
	if len(got.events) != n {
		t.Fatalf("%s: read %d events, want %d", what, len(got.events), n)
	}
	for i := 0; i < n; i++ {
		if !sameEvent(&got.events[i], &want.events[i]) {
			t.Fatalf("%s: event %d is %+v, want %+v", what, i, got.events[i], want.events[i])
		}
	}
}

// A crashed run leaves a file cut anywhere. Whatever the cut, the reader
// returns exactly the events of the whole blocks before it and warns, and
// only a cut inside the header is an error.
func TestTruncatedAtEveryOffset(t *testing.T) {
	f := makeBlockedFile(t)
	full := len(f.data)
	endBlock := f.boundaries[len(f.boundaries)-1]
	for cut := 0; cut <= full; cut++ {
		got := decode(f.data[:cut], "cut.rkt")
		what := fmt.Sprintf("cut at %d of %d", cut, full)
		if cut < len(Magic)+1 {
			var fe *trace.FormatError
			if !errors.As(got.err, &fe) || fe.Offset != 0 || len(got.events) != 0 {
				t.Fatalf("%s: got %d events, error %v; want a header error at offset 0", what, len(got.events), got.err)
			}
			continue
		}
		if got.err != nil {
			t.Fatalf("%s: error %v", what, got.err)
		}
		n, meta, at := f.blockPrefix(cut)
		recs := f.recordsAt[f.blockIndex(cut)]
		checkPrefix(t, what, got, f.want, n)
		if c := countsOf(got.meta); c != meta {
			t.Fatalf("%s: Meta sizes %+v, want %+v (the definitions of the whole blocks)", what, c, meta)
		}
		var want []string
		switch {
		case cut == full:
			// complete: no warning
		case cut == at:
			want = []string{fmt.Sprintf("cut.rkt: no end block after %d events at offset %d; the writer did not finish (the run crashed, or its tracing stopped early: its output says why)", recs, cut)}
		default:
			want = []string{fmt.Sprintf("cut.rkt: cut off at offset %d inside the block at offset %d, after %d events; the run probably crashed", cut, at, recs)}
		}
		if fmt.Sprint(got.warnings) != fmt.Sprint(want) {
			t.Fatalf("%s: warnings %q, want %q", what, got.warnings, want)
		}
		if cut > endBlock && n != len(f.want.events) {
			t.Fatalf("%s: a cut inside the end block lost events", what)
		}
	}
}

// Flip bits of every byte in turn: each damage is an error naming the file
// and an offset at or before the damaged byte, or, when it makes a block
// look longer than the rest of the file, a truncation warning. Either way
// the events returned are exactly a prefix of those written.
func TestCorruptedByteAtEveryOffset(t *testing.T) {
	f := makeBlockedFile(t)
	errs, warns := 0, 0
	for off := range f.data {
		for _, mask := range []byte{0x01, 0x80, 0xFF} {
			data := bytes.Clone(f.data)
			data[off] ^= mask
			got := decode(data, "bad.rkt")
			what := fmt.Sprintf("byte %d ^ %#x", off, mask)
			n, _, _ := f.blockPrefix(off)
			if off == len(Magic) && got.err == nil && len(got.warnings) == 0 && int(data[off]) >= MinVersion && int(data[off]) < Version {
				// The version byte made an earlier version whose
				// records this file does not use: the same trace.
				checkPrefix(t, what, got, f.want, len(f.want.events))
				continue
			}
			if got.err != nil {
				errs++
				var fe *trace.FormatError
				// The version byte made 2: a valid version, without the
				// range ops, which its first range record then rejects.
				older := off == len(Magic) && strings.Contains(got.err.Error(), "in a version 2 file")
				if !errors.As(got.err, &fe) || fe.File != "bad.rkt" || fe.Offset < 0 || fe.Offset > int64(off) && !older {
					t.Fatalf("%s: error %v; want a *trace.FormatError for bad.rkt at an offset <= %d", what, got.err, off)
				}
				if len(got.events) > n && !older {
					t.Fatalf("%s: %d events returned before the error, but only %d precede the damaged block", what, len(got.events), n)
				}
			} else {
				warns++
				if len(got.warnings) == 0 {
					t.Fatalf("%s: read %d events without error or warning", what, len(got.events))
				}
				if len(got.events) > n {
					t.Fatalf("%s: %d events read past the damaged block (which holds event %d)", what, len(got.events), n)
				}
			}
			checkPrefix(t, what, got, f.want, len(got.events))
		}
	}
	t.Logf("%d errors, %d truncation warnings", errs, warns)
}

// Some file systems leave zeros where a crashed program's last writes
// should be: a zero tail after whole blocks is a cut, not corruption.
func TestZeroFilledTailIsACut(t *testing.T) {
	f := makeBlockedFile(t)
	at := f.boundaries[5]
	data := append(bytes.Clone(f.data[:at]), make([]byte, 70000)...)
	got := decode(data, "z.rkt")
	if got.err != nil {
		t.Fatal(got.err)
	}
	checkPrefix(t, "zero tail", got, f.want, f.eventsAt[5])
	want := fmt.Sprintf("z.rkt: cut off at offset %d after %d events: the last 70000 bytes are zeros; the run probably crashed", at, f.recordsAt[5])
	if len(got.warnings) != 1 || got.warnings[0] != want {
		t.Fatalf("warnings %q, want %q", got.warnings, want)
	}
	// A zero kind byte followed by anything else is corruption.
	data[len(data)-1] = 1
	if got := decode(data, "z.rkt"); got.err == nil || got.err.Error() != fmt.Sprintf("z.rkt: offset %d: unknown block kind 0", at) {
		t.Fatalf("got %v", got.err)
	}
}
