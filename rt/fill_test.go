package rt

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// A Read's buffer (FillW, Filled): the bytes the call returns are written
// after it, unless a send of untraced code inside it (the runtime's
// channel hook) came first, which writes the whole buffer there; calls
// nest, and past maxFills the outermost's buffer is written whole when
// another begins.
func TestReadFill(t *testing.T) {
	buf := escape[[16]byte]()[:]
	inner := escape[[8]byte]()[:]
	ch := escape[[64]byte]() // where a channel would be: onChan only names its address
	for _, tc := range []struct {
		name string
		call func(site uint32)
		want []string
	}{
		{"n bytes after the call", func(site uint32) {
			FillW(buf, site, true)
			Filled(4, nil)
		}, []string{"buf 0-3"}},
		{"no bytes read", func(site uint32) {
			FillW(buf, site, true)
			Filled(0, nil)
		}, nil},
		{"more than the buffer", func(site uint32) {
			FillW(buf, site, true)
			Filled(100, nil)
		}, []string{"buf 0-15"}},
		{"not recorded", func(site uint32) {
			FillW(buf, site, false)
			Filled(4, nil)
		}, nil},
		{"a send of untraced code inside", func(site uint32) {
			FillW(buf, site, true)
			onChan(unsafe.Pointer(ch), chanSendBegin)
			Filled(4, nil)
		}, []string{"buf 0-15", "release"}},
		{"a receive of untraced code inside", func(site uint32) {
			FillW(buf, site, true)
			onChan(unsafe.Pointer(ch), chanRecvBegin)
			onChan(unsafe.Pointer(ch), chanRecvEnd)
			Filled(4, nil)
		}, []string{"release", "acquire", "buf 0-3"}},
		{"a release of traced code inside", func(site uint32) {
			FillW(buf, site, true)
			emitEdge(trace.OpSyncRelease, site, 0x7000)
			Filled(4, nil)
		}, []string{"release", "buf 0-3"}},
		{"an unrecorded Read inside a Read", func(site uint32) {
			FillW(buf, site, true)
			FillW(inner, site, false) // an unsampled frame
			Filled(2, nil)
			FillW(inner[:0], site, true)
			Filled(0, nil)
			Filled(4, nil)
		}, []string{"buf 0-3"}},
		{"a Read inside a Read", func(site uint32) {
			FillW(buf, site, true)
			FillW(inner, site, true)
			Filled(2, nil)
			Filled(4, nil)
		}, []string{"inner 0-1", "buf 0-3"}},
		{"a send inside two", func(site uint32) {
			FillW(buf, site, true)
			FillW(inner, site, true)
			onChan(unsafe.Pointer(ch), chanSendBegin)
			Filled(2, nil)
			Filled(4, nil)
		}, []string{"inner 0-7", "buf 0-15", "release"}},
		{"deeper than noted", func(site uint32) {
			FillW(buf, site, true)
			for range maxFills {
				FillW(inner, site, true)
			}
			for range maxFills + 1 {
				Filled(1, nil)
			}
		}, []string{"buf 0-15", "inner 0-0", "inner 0-0", "inner 0-0", "inner 0-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := record(t, false, tc.call)
			if got := fillEvents(tr, buf, inner); !slices.Equal(got, tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}

// fillEvents describes tr's writes of the buffers (as runs of bytes "buf
// 0-3") and its releases and acquires of objects outside them.
func fillEvents(tr *trace.Trace, bufs ...[]byte) []string {
	names := []string{"buf", "inner"}
	var out []string
	run := func(name string, i int) {
		if n := len(out); n > 0 {
			var lo, hi int
			var last string
			if k, _ := fmt.Sscanf(out[n-1], "%s %d-%d", &last, &lo, &hi); k == 3 && last == name && hi == i-1 {
				out[n-1] = fmt.Sprintf("%s %d-%d", name, lo, i)
				return
			}
		}
		out = append(out, fmt.Sprintf("%s %d-%d", name, i, i))
	}
	for _, e := range tr.Events {
		switch e.Op {
		case trace.OpSyncRelease:
			out = append(out, "release")
		case trace.OpSyncAcquire:
			out = append(out, "acquire")
		case trace.OpWrite:
			for k, b := range bufs {
				lo := uint64(uintptr(unsafe.Pointer(&b[0])))
				if e.Obj >= lo && e.Obj < lo+uint64(len(b)) {
					run(names[k], int(e.Obj-lo))
				}
			}
		}
	}
	return out
}
