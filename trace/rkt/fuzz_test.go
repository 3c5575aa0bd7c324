package rkt

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/racekit/racekit/trace"
)

func readerSeeds(f *testing.F) {
	small := encode(f, genScript(newRand(3), 60), 48)
	f.Add(small)
	f.Add(small[:len(small)/2])
	f.Add(encode(f, genScript(newRand(4), 300), DefaultBlockSize))
	f.Add(file(block(2, 0)))
	f.Add(file(block(1, 0x40, 0, 0, 0, 0, 0x6E, 0, 0, 3, 1, 2, 3), block(2, 1)))
	f.Add([]byte(Magic + "\x02"))
	f.Add([]byte("T1|r(x)|1\n"))
	f.Add([]byte{})
}

// FuzzReader: any bytes give events and then io.EOF or a
// *trace.FormatError, never a panic; every event returned is valid and
// uses only defined goroutines and sites; and a file read without error or
// warning re-encodes to one that reads back the same.
func FuzzReader(f *testing.F) {
	readerSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz.rkt")
		tr := trace.NewTrace()
		copier := trace.NewMetaCopier(r.Meta(), tr)
		var e trace.Event
		var err error
		for n := 0; ; n++ {
			if err = r.Next(&e); err != nil {
				break
			}
			if n == 1<<16 {
				// A few bytes of span can stand for 2^45 words: what is
				// read so far was checked, the rest would only take time.
				return
			}
			if verr := e.Validate(); verr != nil {
				t.Fatalf("event %+v: %v", e, verr)
			}
			m := r.Meta()
			if !m.GoroutineDefined(e.G) || int(e.Site) >= len(m.Sites) {
				t.Fatalf("event %+v uses an undefined goroutine or site", e)
			}
			must(t, copier.Sync())
			must(t, tr.WriteEvent(&e))
		}
		must(t, copier.Sync())
		if !errors.Is(err, io.EOF) {
			var fe *trace.FormatError
			if !errors.As(err, &fe) || fe.File != "fuzz.rkt" || fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error %v (%T); want a *trace.FormatError for fuzz.rkt within the input", err, err)
			}
			return
		}
		if len(r.Warnings()) > 0 {
			return
		}
		// A clean file is canonical enough to survive a second trip.
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if _, err := trace.Copy(w, tr.Iter()); err != nil {
			t.Fatalf("re-encoding what was read: %v", err)
		}
		must(t, w.Close())
		again := decode(buf.Bytes(), "again.rkt")
		if again.err != nil || len(again.events) != len(tr.Events) {
			t.Fatalf("second trip: %d events, err %v; want %d", len(again.events), again.err, len(tr.Events))
		}
		for i := range tr.Events {
			if !sameEvent(&again.events[i], &tr.Events[i]) {
				t.Fatalf("second trip, event %d: %+v, want %+v", i, again.events[i], tr.Events[i])
			}
		}
		checkSameMeta(t, again.meta, tr.M)
	})
}

// FuzzRoundTrip: a stream built from the fuzz bytes (every op, flag,
// definition kind, value and address pattern genScript knows), written with
// a block size from the input, reads back identically.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint16(1))
	f.Add(bytes.Repeat([]byte{0xFF, 0x00, 0x80, 0x7F}, 64), uint16(100))
	f.Add(bytes.Repeat([]byte{3, 14, 15, 92, 65, 35, 89, 79, 32, 38, 46}, 40), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, blockSize uint16) {
		steps := genScript(&byteSource{b: data}, 1+len(data)/4)
		checkRoundTrip(t, steps, int(blockSize))
	})
}
