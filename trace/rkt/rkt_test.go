package rkt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// block assembles a block by hand, as doc.go specifies it.
func block(kind byte, payload ...byte) []byte {
	b := append([]byte{kind}, binary.AppendUvarint(nil, uint64(len(payload)))...)
	b = append(b, payload...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// file is a header of the version this package writes followed by the
// given blocks.
func file(blocks ...[]byte) []byte { return fileV(Version, blocks...) }

// fileV is a header of the given version followed by the given blocks.
func fileV(version byte, blocks ...[]byte) []byte {
	b := []byte(Magic + string(rune(version)))
	for _, bl := range blocks {
		b = append(b, bl...)
	}
	return b
}

// The format is a public contract: this pins the exact bytes of a small
// trace, worked out by hand from doc.go.
func TestWriterBytesMatchTheDocumentedFormat(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.DefineSite(1, trace.Site{File: "a.go", Line: 3, Func: "main.f"}))
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "main"}))
	must(t, w.DefineName(0x1000, "x"))
	must(t, w.WriteEvent(&trace.Event{Seq: 0, G: 0, Op: trace.OpWrite, Site: 1, Obj: 0x1000, Value: 5}))
	must(t, w.WriteEvent(&trace.Event{Seq: 1, G: 0, Op: trace.OpRead, Site: 1, Obj: 0x1008, Flags: trace.FlagValueUnknown}))
	must(t, w.WriteEvent(&trace.Event{Seq: 5, G: 0, Op: trace.OpAcquire, Flags: trace.FlagReadLock, Obj: 0x2000}))
	must(t, w.Close())

	want := file(
		block(1,
			// site 1: "a.go", line 3, column 0, "main.f"
			0x20, 1, 4, 'a', '.', 'g', 'o', 3, 0, 6, 'm', 'a', 'i', 'n', '.', 'f',
			// goroutine 0: parent NoParent (0), site 0, "main"
			0x40, 0, 0, 0, 4, 'm', 'a', 'i', 'n',
			// name of 0x1000: "x"
			0x60, 0x80, 0x20, 1, 'x',
			// Write | same G | seq+1; site +1 → 2; obj +0x1000 → 0x2000; value 5
			0x62, 2, 0x80, 0x40, 5,
			// Read | same G | seq+1 | value unknown; site +0; obj +8 → 16
			0xE1, 0, 16,
			// Acquire | same G | read lock; seq gap 5-2 = 3; site -1 → 1; sync obj +0x2000 → 0x4000
			0xA3, 3, 1, 0x80, 0x80, 1,
		),
		block(2, 3), // end: 3 events
	)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes:\n got % x\nwant % x", buf.Bytes(), want)
	}
}

// A site's callee (version 5) is a definition record of its own, right
// after the site's.
func TestWriterCalleeBytes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.DefineSite(1, trace.Site{File: "a.go", Line: 3, Func: "m.f", Callee: trace.Frame{Func: "s.W", File: "b.go", Line: 9}}))
	must(t, w.Close())
	want := file(
		block(1,
			// site 1: "a.go", line 3, column 0, "m.f"
			0x20, 1, 4, 'a', '.', 'g', 'o', 3, 0, 3, 'm', '.', 'f',
			// callee of site 1: "s.W", "b.go", line 9
			0x80, 1, 3, 's', '.', 'W', 4, 'b', '.', 'g', 'o', 9,
		),
		block(2, 0),
	)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes:\n got % x\nwant % x", buf.Bytes(), want)
	}
	r := NewReader(bytes.NewReader(buf.Bytes()), "t.rkt")
	var e trace.Event
	if err := r.Next(&e); err != io.EOF {
		t.Fatalf("Next: %v, want EOF", err)
	}
	if got := r.Meta().Site(1); got.Callee != (trace.Frame{Func: "s.W", File: "b.go", Line: 9}) || got.Func != "m.f" {
		t.Fatalf("site 1 read back as %+v", got)
	}
}

// A site's call and its wide mark (version 6) are definition records of
// their own, right after the site's.
func TestWriterCallBytes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	call := trace.Call{Func: "m.g", EndLine: 4, EndCol: 7}
	must(t, w.DefineSite(1, trace.Site{File: "a.go", Line: 3, Func: "m.f", Call: call}))
	must(t, w.DefineSite(2, trace.Site{File: "a.go", Line: 5, Wide: true}))
	must(t, w.Close())
	want := file(
		block(1,
			// site 1: "a.go", line 3, column 0, "m.f"
			0x20, 1, 4, 'a', '.', 'g', 'o', 3, 0, 3, 'm', '.', 'f',
			// call at site 1: "m.g", ending at 4:7
			0xA0, 1, 3, 'm', '.', 'g', 4, 7,
			// site 2: "a.go", line 5, column 0, no function; wide
			0x20, 2, 4, 'a', '.', 'g', 'o', 5, 0, 0,
			0xC0, 2,
		),
		block(2, 0),
	)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes:\n got % x\nwant % x", buf.Bytes(), want)
	}
	r := NewReader(bytes.NewReader(buf.Bytes()), "t.rkt")
	var e trace.Event
	if err := r.Next(&e); err != io.EOF {
		t.Fatalf("Next: %v, want EOF", err)
	}
	if got := r.Meta().Site(1); got.Call != call || got.Func != "m.f" || got.Wide {
		t.Fatalf("site 1 read back as %+v", got)
	}
	if got := r.Meta().Site(2); !got.Wide || !got.Call.IsZero() {
		t.Fatalf("site 2 read back as %+v", got)
	}
}

// A site's inline mark (version 8) is a definition record of its own,
// right after the site's; a version 7 file cannot hold one.
func TestWriterInlineBytes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.DefineSite(1, trace.Site{File: "a.go", Line: 3, Func: "m.New", Inline: true}))
	must(t, w.Close())
	site := []byte{
		// site 1: "a.go", line 3, column 0, "m.New"; inline
		0x20, 1, 4, 'a', '.', 'g', 'o', 3, 0, 5, 'm', '.', 'N', 'e', 'w',
		0xE0, 1,
	}
	if want := file(block(1, site...), block(2, 0)); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes:\n got % x\nwant % x", buf.Bytes(), want)
	}
	r := NewReader(bytes.NewReader(buf.Bytes()), "t.rkt")
	var e trace.Event
	if err := r.Next(&e); err != io.EOF {
		t.Fatalf("Next: %v, want EOF", err)
	}
	if got := r.Meta().Site(1); !got.Inline || got.Func != "m.New" {
		t.Fatalf("site 1 read back as %+v", got)
	}
	r = NewReader(bytes.NewReader(fileV(7, block(1, site...), block(2, 0))), "t.rkt")
	if err := r.Next(&e); err == nil || !strings.Contains(err.Error(), "inline function definition in a version 7 file") {
		t.Fatalf("version 7 file with an inline mark: %v", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripEveryOpAndFlag(t *testing.T) {
	var steps []step
	add := func(s step) { steps = append(steps, s) }
	add(step{gor: &trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "main"}})
	add(step{site: &trace.Site{File: "m.go", Line: 1, Col: 2, Func: "main.main"}})
	add(step{gor: &trace.Goroutine{ID: 1, Parent: 0, Site: 1}})
	seq := uint64(100)
	for op := trace.Op(1); op.Valid(); op++ {
		for _, flag := range []trace.Flags{0, trace.FlagReadLock, trace.FlagValueUnknown} {
			if opFlag[op] != flag && flag != 0 {
				continue
			}
			for _, v := range []uint64{0, 1, 127, 128, 1 << 40, math.MaxUint64} {
				for _, obj := range []uint64{0, 0x10, 0xc000012340, math.MaxUint32, math.MaxUint64} {
					if (op == trace.OpFork || op == trace.OpJoin) && obj > math.MaxUint32 {
						continue
					}
					if op.IsRange() {
						// The value is a span: element sizes and counts
						// that need one to ten bytes.
						sp, ok := trace.MakeSpan(1+v%4096, 1+v%3)
						if flag != 0 || !ok {
							continue
						}
						v = uint64(sp)
					}
					seq += 1 + v%3 // steps of 1 and gaps
					e := &trace.Event{Seq: seq, G: trace.GID(seq % 2), Op: op, Flags: flag, Site: trace.SiteID(seq % 2), Obj: obj, Value: v}
					if op == trace.OpMethodBegin {
						e.Addrs = []uint64{obj + 16, v, obj, v} // unsorted, duplicate
					}
					add(step{event: e})
				}
			}
		}
		// Definitions between events become visible with the next event.
		add(step{name: &trace.Name{Obj: uint64(op), Name: op.String()}})
	}
	add(step{event: &trace.Event{Seq: seq + 1, Op: trace.OpMethodBegin, Addrs: []uint64{}}})
	add(step{event: &trace.Event{Seq: seq + 2, Op: trace.OpMethodBegin, Addrs: []uint64{math.MaxUint64, 0}}})
	add(step{site: &trace.Site{File: "last.go"}}) // after the last event: visible at EOF
	checkRoundTrip(t, steps, DefaultBlockSize)
	checkRoundTrip(t, steps, 1) // one record per block
}

func TestRoundTripRandomStreams(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := newRand(seed)
		steps := genScript(rng, 200+rng.IntN(3000))
		blockSize := []int{1, 17, 256, 4096, DefaultBlockSize}[seed%5]
		checkRoundTrip(t, steps, blockSize)
	}
}

func TestManySmallBlocksEachDecodeAlone(t *testing.T) {
	steps := genScript(newRand(7), 2000)
	data := checkRoundTrip(t, steps, 64)
	// Count the blocks by walking their lengths.
	n := 0
	for p := len(Magic) + 1; p < len(data); n++ {
		l, k := binary.Uvarint(data[p+1:])
		p += 1 + k + int(l) + 4
	}
	if n < 100 {
		t.Fatalf("%d blocks; want the stream spread over many", n)
	}
}

func TestRealisticStreamUnder8BytesPerEvent(t *testing.T) {
	steps := realisticStream(100_000)
	data := checkRoundTrip(t, steps, DefaultBlockSize)
	perEvent := float64(len(data)) / 100_000
	t.Logf("%.2f bytes/event", perEvent)
	if perEvent > 8 {
		t.Fatalf("%.2f bytes per event; the format's target is at most 8", perEvent)
	}
}

func TestWriterRejectsWhatItCannotWriteAndStaysUsable(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent}))
	cases := []struct {
		call func() error
		want string
	}{
		{func() error { return w.DefineSite(2, trace.Site{}) }, "rkt: site 2 defined out of order (expected 1)"},
		{func() error { return w.DefineSite(1, trace.Site{File: "a.go", Line: -1}) }, "rkt: site 1 (a.go:-1): line and column must be in [0, 2^31)"},
		{func() error { return w.DefineGoroutine(trace.Goroutine{ID: 0}) }, "rkt: goroutine 0 defined twice"},
		{func() error { return w.DefineGoroutine(trace.Goroutine{ID: trace.NoParent}) }, "rkt: goroutine ID 4294967295 is reserved"},
		{func() error { return w.DefineGoroutine(trace.Goroutine{ID: 1 + MaxGIDGap}) }, "rkt: goroutine ID 65537 is not below the 1 goroutines defined so far plus 65536; GIDs must be dense"},
		{func() error { return w.DefineGoroutine(trace.Goroutine{ID: 1, Site: 1}) }, "rkt: goroutine 1: site 1 is not defined"},
		{func() error { return w.WriteEvent(&trace.Event{Seq: 3, G: 1, Op: trace.OpRead}) }, "rkt: event seq 3 uses goroutine 1, which is not defined"},
		{func() error { return w.WriteEvent(&trace.Event{Seq: 4, Op: trace.OpRead, Site: 1}) }, "rkt: event seq 4 uses site 1, which is not defined"},
		{func() error { return w.WriteEvent(&trace.Event{Seq: 5, Op: trace.Op(40)}) }, "rkt: event seq 5: invalid op 40"},
		{func() error { return w.WriteEvent(&trace.Event{Seq: 6, Op: trace.OpFork, Flags: trace.FlagReadLock}) }, "rkt: event seq 6: read-lock flag on fork"},
		{func() error {
			return w.WriteEvent(&trace.Event{Op: trace.OpMethodBegin, Addrs: make([]uint64, MaxBlockLen/10)})
		}, "rkt: event seq 0 needs up to 4194356 bytes, more than a block holds (4194304)"},
	}
	for _, c := range cases {
		err := c.call()
		if err == nil || err.Error() != c.want {
			t.Errorf("got error %v, want %q", err, c.want)
		}
	}
	// Nothing was written for the rejected calls.
	must(t, w.WriteEvent(&trace.Event{Seq: 9, Op: trace.OpWrite, Obj: 8, Value: 1}))
	must(t, w.Close())
	got := decode(buf.Bytes(), "w.rkt")
	if got.err != nil || len(got.events) != 1 || got.events[0].Seq != 9 {
		t.Fatalf("after rejected calls the file reads as %d events, err %v", len(got.events), got.err)
	}
	if err := w.WriteEvent(&trace.Event{Op: trace.OpRead}); err == nil || err.Error() != "rkt: write after Close" {
		t.Fatalf("write after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestWriterErrorsAreSticky(t *testing.T) {
	w := NewWriter(&failingWriter{n: 1}) // the header goes through, the first block fails
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent}))
	must(t, w.WriteEvent(&trace.Event{Op: trace.OpBegin})) // buffered
	err := w.Flush()
	if err == nil || err.Error() != "rkt: writing block: disk full" {
		t.Fatalf("Flush: %v", err)
	}
	if err2 := w.WriteEvent(&trace.Event{Op: trace.OpEnd}); err2 != err {
		t.Fatalf("WriteEvent after a write error: %v, want %v", err2, err)
	}
	if err2 := w.Close(); err2 != err {
		t.Fatalf("Close after a write error: %v, want %v", err2, err)
	}
}

// Flush leaves a readable prefix: a program that crashes after it loses
// nothing flushed, and the reader says the writer did not finish.
func TestFlushedPrefixOfAnUnclosedWriterIsReadable(t *testing.T) {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	w := NewWriter(bw)
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent}))
	for i := 0; i < 10; i++ {
		must(t, w.WriteEvent(&trace.Event{Seq: uint64(i), Op: trace.OpWrite, Obj: 0x100, Value: uint64(i)}))
	}
	must(t, w.Flush()) // also flushes the bufio.Writer
	must(t, w.WriteEvent(&trace.Event{Seq: 10, Op: trace.OpWrite, Obj: 0x100}))
	// The program dies here.
	got := decode(buf.Bytes(), "crash.rkt")
	if got.err != nil || len(got.events) != 10 {
		t.Fatalf("read %d events, err %v; want the 10 flushed", len(got.events), got.err)
	}
	want := []string{"crash.rkt: no end block after 10 events at offset " + strconv.Itoa(buf.Len()) + "; the writer did not finish (the run crashed, or its tracing stopped early: its output says why)"}
	if strings.Join(got.warnings, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings %q, want %q", got.warnings, want)
	}
}

func TestEmptyTraces(t *testing.T) {
	var buf bytes.Buffer
	must(t, NewWriter(&buf).Close())
	if want := file(block(2, 0)); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("closed empty writer wrote % x, want % x", buf.Bytes(), want)
	}
	got := decode(buf.Bytes(), "e.rkt")
	if got.err != nil || len(got.events) != 0 || len(got.warnings) != 0 {
		t.Fatalf("empty trace: %d events, err %v, warnings %q", len(got.events), got.err, got.warnings)
	}
	// An events block may be empty.
	got = decode(file(block(1), block(2, 0)), "e.rkt")
	if got.err != nil || len(got.events) != 0 || len(got.warnings) != 0 {
		t.Fatalf("empty events block: %d events, err %v, warnings %q", len(got.events), got.err, got.warnings)
	}
}

func TestNextAfterEOFAndErrorKeepsReturningThem(t *testing.T) {
	r := NewReader(bytes.NewReader(file(block(2, 0))), "a.rkt")
	var e trace.Event
	for i := 0; i < 3; i++ {
		if err := r.Next(&e); err != io.EOF {
			t.Fatalf("call %d: %v, want io.EOF", i, err)
		}
	}
	r = NewReader(bytes.NewReader(file(block(9))), "b.rkt")
	first := r.Next(&e)
	if second := r.Next(&e); first == nil || second != first {
		t.Fatalf("errors %v then %v; want the same error twice", first, second)
	}
}

// Hand-made files, each broken in one way, and the exact error each gives.
func TestMalformedInputErrors(t *testing.T) {
	g0 := []byte{0x40, 0, 0, 0, 0} // goroutine 0, no parent, site 0, no name
	bad := block(1, g0...)
	bad[len(bad)-1] ^= 0xFF
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "t.rkt: offset 0: empty file, not a .rkt trace"},
		{"text trace", []byte("T1|r(x)|1\n"), "t.rkt: offset 0: not a .rkt trace (bad magic number)"},
		{"short header", []byte(Magic[:5]), "t.rkt: offset 0: file ends inside the .rkt header (after 5 bytes)"},
		{"no version", []byte(Magic), "t.rkt: offset 0: file ends inside the .rkt header (no version)"},
		{"future version", []byte(Magic + "\x09"), "t.rkt: offset 8: unsupported .rkt format version 9 (this reader reads versions 1 to 8); use a matching racekit"},
		{"checksum", file(bad), "t.rkt: offset 9: checksum mismatch in block of 5 bytes (stored " +
			fmt.Sprintf("0x%08x, computed 0x%08x", binary.LittleEndian.Uint32(bad[7:]), binary.LittleEndian.Uint32(block(1, g0...)[7:])) + "): the file is corrupt"},
		{"unknown block kind", file(block(7, 1, 2)), "t.rkt: offset 9: unknown block kind 7"},
		{"block too long", file([]byte{1, 0x81, 0x80, 0x80, 0x02}), "t.rkt: offset 9: block length 4194305 exceeds the maximum 4194304"},
		{"block length varint too long", file([]byte{1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), "t.rkt: offset 9: block length exceeds the maximum 4194304"},
		{"invalid op", file(block(1, append(g0, 0x1C)...)), "t.rkt: offset 16: invalid op 28 (record of the events block at offset 9)"},
		{"Go atomic record in a version 3 file", fileV(3, block(1, append(g0, 0x18)...)), "t.rkt: offset 16: invalid op 24 (record of the events block at offset 9)"},
		{"Go atomic record of an address with AtomicLockBit", file(block(1, append(g0, 0x18|0x40|0x80, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)...)),
			"t.rkt: offset 16: aload of 0x4000000000000000: the address has AtomicLockBit set (record of the events block at offset 9)"},
		{"bad varint", file(block(1, append(g0, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01)...)),
			"t.rkt: offset 16: bad varint in goroutine (record of the events block at offset 9)"},
		{"field past block end", file(block(1, append(g0, 0x62, 0x00)...)),
			"t.rkt: offset 16: object runs past the end of the block (record of the events block at offset 9)"},
		{"undefined goroutine", file(block(1, append(g0, 0x42, 3, 0, 0, 0)...)),
			"t.rkt: offset 16: event uses goroutine 3, which is not defined (record of the events block at offset 9)"},
		{"goroutine 0 used before its definition", file(block(1, 0x62, 0, 0, 0)),
			"t.rkt: offset 11: event uses goroutine 0, which is not defined (record of the events block at offset 9)"},
		{"undefined site", file(block(1, append(g0, 0x62, 2, 0, 0)...)),
			"t.rkt: offset 16: event uses site 1, which is not defined (record of the events block at offset 9)"},
		{"flag on an op without one", file(block(1, append(g0, 0xE5, 0, 0)...)),
			"t.rkt: offset 16: flag bit set on fork (record of the events block at offset 9)"},
		{"fork of a goroutine out of range", file(block(1, append(g0, 0x65, 0, 0x80, 0x80, 0x80, 0x80, 0x20)...)),
			"t.rkt: offset 16: fork of goroutine 4294967296 out of range (record of the events block at offset 9)"},
		{"addresses past block end", file(block(1, append(g0, 0x6E, 0, 0, 5, 0)...)),
			"t.rkt: offset 16: address count 5 exceeds the rest of the block (record of the events block at offset 9)"},
		{"unknown definition kind", file(block(1, 0x00)), "t.rkt: offset 11: unknown definition kind 0 (header byte 0x00) (record of the events block at offset 9)"},
		{"inline function at an undefined site", file(block(1, 0xE0, 1)), "t.rkt: offset 11: inline function at site 1, which is not defined (record of the events block at offset 9)"},
		{"wide access at an undefined site", file(block(1, 0xC0, 1)), "t.rkt: offset 11: wide access at site 1, which is not defined (record of the events block at offset 9)"},
		{"wide access in version 5", fileV(5, block(1, 0x20, 1, 0, 0, 0, 0, 0xC0, 1)), "t.rkt: offset 17: wide access definition in a version 5 file (record of the events block at offset 9)"},
		{"call of an undefined site", file(block(1, 0xA0, 1, 1, 'f', 2, 3)), "t.rkt: offset 11: call at site 1, which is not defined (record of the events block at offset 9)"},
		{"call without end line", file(block(1, 0x20, 1, 0, 0, 0, 0, 0xA0, 1, 0, 0, 3)), "t.rkt: offset 17: call at site 1: end 0:3 out of range (record of the events block at offset 9)"},
		{"call in version 5", fileV(5, block(1, 0x20, 1, 0, 0, 0, 0, 0xA0, 1, 1, 'f', 2, 3)), "t.rkt: offset 17: call definition in a version 5 file (record of the events block at offset 9)"},
		{"callee of an undefined site", file(block(1, 0x80, 1, 1, 'f', 0, 0)), "t.rkt: offset 11: callee of site 1, which is not defined (record of the events block at offset 9)"},
		{"callee without function", file(block(1, 0x20, 1, 0, 0, 0, 0, 0x80, 1, 0, 0, 0)), "t.rkt: offset 17: callee of site 1 has no function (record of the events block at offset 9)"},
		{"callee in version 4", fileV(4, block(1, 0x20, 1, 0, 0, 0, 0, 0x80, 1, 1, 'f', 0, 0)), "t.rkt: offset 17: callee definition in a version 4 file (record of the events block at offset 9)"},
		{"site out of order", file(block(1, 0x20, 2, 0, 0, 0, 0)), "t.rkt: offset 11: site 2 defined out of order (expected 1) (record of the events block at offset 9)"},
		{"site line out of range", file(block(1, 0x20, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x08, 0, 0)),
			"t.rkt: offset 11: site 1: line 2147483648 or column 0 out of range (record of the events block at offset 9)"},
		{"site name past block end", file(block(1, 0x20, 1, 9, 'a')), "t.rkt: offset 11: site file of 9 bytes runs past the end of the block (record of the events block at offset 9)"},
		{"goroutine defined twice", file(block(1, append(g0, g0...)...)), "t.rkt: offset 16: goroutine 0 defined twice (record of the events block at offset 9)"},
		{"goroutine ID jump", file(block(1, 0x40, 0x80, 0x80, 0x04, 0, 0, 0)),
			"t.rkt: offset 11: goroutine ID 65536 is not below the 0 goroutines defined so far plus 65536 (record of the events block at offset 9)"},
		// Each ID is within the gap of the largest so far, but the table
		// may not outgrow the definitions by more than the gap.
		{"goroutine IDs stepping by the gap", file(block(1, 0x40, 0xFF, 0xFF, 0x03, 0, 0, 0, 0x40, 0xFE, 0xFF, 0x07, 0, 0, 0)),
			"t.rkt: offset 18: goroutine ID 131070 is not below the 1 goroutines defined so far plus 65536 (record of the events block at offset 9)"},
		{"goroutine site undefined", file(block(1, 0x40, 0, 0, 1, 0)), "t.rkt: offset 11: goroutine 0: site 1 is not defined (record of the events block at offset 9)"},
		{"end count wrong", file(block(1, append(g0, 0x67, 0, 0)...), block(2, 2)), "t.rkt: offset 23: end block counts 2 events but the file holds 1"},
		{"end block malformed", file(block(2, 0, 0)), "t.rkt: offset 9: malformed end block"},
		{"data after end", append(file(block(2, 0)), 1), "t.rkt: offset 16: data after the end block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decode(c.data, "t.rkt")
			var fe *trace.FormatError
			if !errors.As(got.err, &fe) {
				t.Fatalf("got %v (%T), want a *trace.FormatError", got.err, got.err)
			}
			if got.err.Error() != c.want {
				t.Fatalf("got  %q\nwant %q", got.err.Error(), c.want)
			}
		})
	}
}

func TestEncodeAndDecodeDoNotAllocatePerEvent(t *testing.T) {
	steps := realisticStream(20_000)
	var events []*trace.Event
	for _, s := range steps {
		if s.event != nil {
			events = append(events, s.event)
		}
	}
	events = append(events, &trace.Event{G: 1, Op: trace.OpMethodBegin, Addrs: []uint64{9, 3, 5}})
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, s := range steps {
		if s.event == nil {
			must(t, writeStep(w, s))
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(len(events)-1, func() {
		must(t, w.WriteEvent(events[i]))
		i++
	})
	if allocs != 0 {
		t.Errorf("WriteEvent: %v allocations per event", allocs)
	}
	must(t, w.Close())

	r := NewReader(bytes.NewReader(buf.Bytes()), "a.rkt")
	var e trace.Event
	must(t, r.Next(&e)) // the first block's buffer and the tables are allocated once
	allocs = testing.AllocsPerRun(len(events)-3, func() { must(t, r.Next(&e)) })
	if allocs != 0 {
		t.Errorf("Next: %v allocations per event", allocs)
	}
}

// Version 2 added channel events with their message (trace.FlagMessage):
// header bit 0x80 on snd/rcv, and the ChanMsg word as a value; version 5
// writes the word as uvarint(kind | payload<<3), and for a ranged kind
// uvarint(zigzag(Lo - the previous Lo)) after it.
func TestMessageEventsBytes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent}))
	recvd := trace.MsgRange(trace.MsgRecvd, 1, 1)
	must(t, w.WriteEvent(&trace.Event{Seq: 0, Op: trace.OpSyncRelease, Flags: trace.FlagMessage, Obj: 0x10, Value: uint64(trace.MsgSendOf(0))}))
	must(t, w.WriteEvent(&trace.Event{Seq: 1, Op: trace.OpSyncAcquire, Flags: trace.FlagMessage, Obj: 0x10, Value: uint64(recvd)}))
	must(t, w.WriteEvent(&trace.Event{Seq: 2, Op: trace.OpSyncAcquire, Obj: 0x10}))
	must(t, w.Close())
	want := file(
		block(1,
			0x40, 0, 0, 0, 0, // goroutine 0
			// SyncRelease | same G | seq+1 | message; site 0; obj +0x10; send/0: kind 1, cap 0
			0xE9, 0, 0x20, 0x01,
			// SyncAcquire | same G | seq+1 | message; site 0; obj +0; recvd/1: kind 4, width 0; Lo +1
			0xEA, 0, 0, 0x04, 0x02,
			// SyncAcquire without a message: no value
			0x6A, 0, 0,
		),
		block(2, 3),
	)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes:\n got % x\nwant % x", buf.Bytes(), want)
	}
	// Version 4 wrote the word whole; both read the same.
	v4 := fileV(4,
		block(1,
			0x40, 0, 0, 0, 0,
			0xE9, 0, 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20,
			0xEA, 0, 0, 0x80, 0x80, 0x80, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
			0x6A, 0, 0,
		),
		block(2, 3),
	)
	for _, f := range [][]byte{buf.Bytes(), v4} {
		got := decode(f, "m.rkt")
		if got.err != nil || len(got.events) != 3 {
			t.Fatalf("decode: %d events, err %v", len(got.events), got.err)
		}
		if e := got.events[0]; trace.ChanMsg(e.Value) != trace.MsgSendOf(0) {
			t.Fatalf("event 0 = %+v, want snd with send/0", e)
		}
		if e := got.events[1]; e.Flags != trace.FlagMessage || trace.ChanMsg(e.Value) != recvd {
			t.Fatalf("event 1 = %+v, want rcv with %v", e, recvd)
		}
	}
	// Version 5: a width or a number out of range is an error.
	for _, bad := range [][]byte{
		{0x40, 0, 0, 0, 0, 0xEA, 0, 0x20, 0x84, 0x80, 0x80, 0x08, 0},                                        // width 2^21
		{0x40, 0, 0, 0, 0, 0xEA, 0, 0x20, 0x04, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, // Lo 2^62
		{0x40, 0, 0, 0, 0, 0xEA, 0, 0x20, 0x04},                                                             // no number
	} {
		if got := decode(file(block(1, bad...), block(2, 1)), "bad.rkt"); got.err == nil {
			t.Errorf("% x read without an error", bad)
		}
	}
	// A version-1 file has no message events: the bit is damage there.
	v1 := fileV(1, block(1, 0x40, 0, 0, 0, 0, 0xEA, 0, 0x20, 1), block(2, 1))
	if got := decode(v1, "v1.rkt"); got.err == nil || !strings.Contains(got.err.Error(), "flag bit set on rcv") {
		t.Fatalf("version 1 with a message bit: err %v, want flag bit set on rcv", got.err)
	}
	// And version 1 files read as before.
	v1 = fileV(1, block(1, 0x40, 0, 0, 0, 0, 0x6A, 0, 0x20), block(2, 1))
	if got := decode(v1, "v1.rkt"); got.err != nil || len(got.events) != 1 || got.events[0].Op != trace.OpSyncAcquire {
		t.Fatalf("version 1: %d events, err %v", len(got.events), got.err)
	}
	// A message word that does not fit its op is an error.
	bad := file(block(1, 0x40, 0, 0, 0, 0, 0xEA, 0, 0x20, 0), block(2, 1))
	if got := decode(bad, "bad.rkt"); got.err == nil {
		t.Fatalf("message word 0 read without an error")
	}
}

// A range event is one record in the file and the word accesses it stands
// for out of the reader, each with the event's Seq, goroutine and site;
// a version 2 file cannot hold one, nor a version 6 file a sparse span.
func TestRangeEventsReadAsWords(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "main"}))
	must(t, w.DefineSite(1, trace.Site{File: "c.go", Line: 3}))
	bytesSpan, _ := trace.MakeSpan(1, 3)     // three bytes
	wideSpan, _ := trace.MakeSpan(24, 2)     // two 3-word structs
	oddSpan, _ := trace.MakeSpan(12, 2)      // two 12-byte structs
	sparse, _ := trace.MakeSparseSpan(16, 3) // the first word of three 16-byte elements
	evs := []trace.Event{
		{Seq: 5, Op: trace.OpReadRange, Site: 1, Obj: 0x100, Value: uint64(bytesSpan)},
		{Seq: 6, Op: trace.OpWriteRange, Site: 1, Obj: 0x200, Value: uint64(wideSpan)},
		{Seq: 7, Op: trace.OpWrite, Site: 1, Obj: 0x300, Flags: trace.FlagValueUnknown},
		{Seq: 8, Op: trace.OpReadRange, Site: 1, Obj: 0x400, Value: uint64(oddSpan)},
		{Seq: 9, Op: trace.OpWriteRange, Site: 1, Obj: 0x500, Value: uint64(sparse)},
	}
	for i := range evs {
		must(t, w.WriteEvent(&evs[i]))
	}
	must(t, w.Close())
	got := decode(buf.Bytes(), "r.rkt")
	if got.err != nil {
		t.Fatal(got.err)
	}
	type word struct {
		seq uint64
		op  trace.Op
		obj uint64
	}
	want := []word{
		{5, trace.OpRead, 0x100}, {5, trace.OpRead, 0x101}, {5, trace.OpRead, 0x102},
		{6, trace.OpWrite, 0x200}, {6, trace.OpWrite, 0x208}, {6, trace.OpWrite, 0x210},
		{6, trace.OpWrite, 0x218}, {6, trace.OpWrite, 0x220}, {6, trace.OpWrite, 0x228},
		{7, trace.OpWrite, 0x300},
		{8, trace.OpRead, 0x400}, {8, trace.OpRead, 0x408}, {8, trace.OpRead, 0x40c}, {8, trace.OpRead, 0x414},
		{9, trace.OpWrite, 0x500}, {9, trace.OpWrite, 0x510}, {9, trace.OpWrite, 0x520},
	}
	var words []word
	for _, e := range got.events {
		if e.Site != 1 || e.G != 0 || e.Flags != trace.FlagValueUnknown || e.Value != 0 {
			t.Fatalf("event %+v: want site 1, goroutine 0, value unknown", e)
		}
		words = append(words, word{e.Seq, e.Op, e.Obj})
	}
	if !slices.Equal(words, want) {
		t.Fatalf("words\n got %v\nwant %v", words, want)
	}

	old := bytes.Clone(buf.Bytes())
	old[len(Magic)] = 2
	got = decode(old, "old.rkt")
	if got.err == nil || !strings.Contains(got.err.Error(), "rrange in a version 2 file") || len(got.events) != 0 {
		t.Fatalf("version 2 file with a range: %d events, error %v", len(got.events), got.err)
	}
	old[len(Magic)] = 6
	got = decode(old, "old.rkt")
	if got.err == nil || !strings.Contains(got.err.Error(), "wrange of a sparse span in a version 6 file") || len(got.events) != 14 {
		t.Fatalf("version 6 file with a sparse span: %d events, error %v", len(got.events), got.err)
	}
}

// An atomic operation with trace.FlagGoAtomic is one record that reads back
// as the four events it stands for, the same events a file of those four
// gives, in fewer bytes.
func TestGoAtomicRecordReadsAsItsFourEvents(t *testing.T) {
	var compact, expanded []step
	compact = append(compact, step{gor: &trace.Goroutine{ID: 0, Parent: trace.NoParent}}, step{gor: &trace.Goroutine{ID: 1, Parent: 0}})
	expanded = append(expanded, compact...)
	seq := uint64(1)
	ops := []struct {
		op    trace.Op
		flags trace.Flags
	}{
		{trace.OpAtomicLoad, 0}, {trace.OpAtomicStore, 0}, {trace.OpAtomicRMW, trace.FlagValueUnknown},
		{trace.OpAtomicLoad, trace.FlagCASFailed}, {trace.OpAtomicRMW, 0},
	}
	for i := 0; i < 200; i++ {
		g := trace.GID(i % 2)
		if i%5 == 4 { // a plain access between
			e := &trace.Event{Seq: seq, G: g, Op: trace.OpWrite, Obj: 0xc000010000 + uint64(i)*8, Value: uint64(i)}
			compact, expanded = append(compact, step{event: e}), append(expanded, step{event: e})
			seq++
			continue
		}
		o := ops[i%len(ops)]
		e := &trace.Event{Seq: seq, G: g, Op: o.op, Flags: trace.FlagGoAtomic | o.flags, Obj: 0xc000020000 + uint64(i%7)*8, Value: uint64(i * 3)}
		compact = append(compact, step{event: e})
		var out [trace.GoAtomicSeqs]trace.Event
		trace.GoAtomicEvents(e, &out)
		for j := range out {
			expanded = append(expanded, step{event: &out[j]})
		}
		seq += trace.GoAtomicSeqs
	}
	a, b := encode(t, compact, DefaultBlockSize), encode(t, expanded, DefaultBlockSize)
	ga, gb := decode(a, "compact.rkt"), decode(b, "expanded.rkt")
	if ga.err != nil || gb.err != nil {
		t.Fatalf("errors %v, %v", ga.err, gb.err)
	}
	if len(ga.events) != len(gb.events) || len(ga.events) != 40+160*trace.GoAtomicSeqs {
		t.Fatalf("%d events from the compact file, %d from the expanded one, want %d", len(ga.events), len(gb.events), 40+160*trace.GoAtomicSeqs)
	}
	for i := range ga.events {
		if !sameEvent(&ga.events[i], &gb.events[i]) {
			t.Fatalf("event %d: %+v from the compact file, %+v from the expanded one", i, ga.events[i], gb.events[i])
		}
	}
	// The data access of a failed CompareAndSwap is a write.
	if e := ga.events[3*trace.GoAtomicSeqs+2]; e.Op != trace.OpWrite || e.Obj != 0xc000020000+3*8 {
		t.Errorf("data access of the failed CompareAndSwap: %+v, want a write of its word", e)
	}
	if len(a)*2 > len(b) {
		t.Errorf("compact file %d bytes, expanded %d: want under half", len(a), len(b))
	}
	t.Logf("compact %d bytes, expanded %d", len(a), len(b))
}
