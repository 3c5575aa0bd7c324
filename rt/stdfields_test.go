package rt

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

type fieldsObj struct {
	A  int
	mu sync.RWMutex
	B  [3]byte
	C  string
}

// fieldsLayout encodes a Fields layout as the instrumenter does.
func fieldsLayout(lock byte, lockOff uintptr, items ...[4]uint64) string {
	var b []byte
	if lock != 0 {
		b = binary.AppendUvarint(append(b, lock), uint64(lockOff))
	}
	for _, it := range items {
		b = append(b, byte(it[0]))
		for _, v := range it[1:] {
			b = binary.AppendUvarint(b, v)
		}
	}
	return string(b)
}

// Fields records the struct's own lock around the fields' accesses, each
// at its address (a byte array's every byte), and nothing for a nil
// pointer.
func TestFieldsLayout(t *testing.T) {
	p := escape[fieldsObj]()
	var o fieldsObj
	lay := fieldsLayout('s', unsafe.Offsetof(o.mu),
		[4]uint64{'r', uint64(unsafe.Offsetof(o.A)), 8, 1},
		[4]uint64{'w', uint64(unsafe.Offsetof(o.B)), 1, 3},
		[4]uint64{'r', uint64(unsafe.Offsetof(o.C)), 8, 1})
	tr := record(t, false, func(site uint32) {
		if Fields(p, lay, site, true) != p {
			t.Error("Fields does not return its operand")
		}
		Fields[fieldsObj](nil, lay, site, true)
	})
	base := uint64(uintptr(unsafe.Pointer(p)))
	var got []string
	for _, e := range tr.Events {
		if e.Op.IsAccess() || e.Op == trace.OpAcquire || e.Op == trace.OpRelease {
			got = append(got, fmt.Sprintf("%v+%d read=%v", e.Op, e.Obj-base, e.ReadLock()))
		}
	}
	mu, b, c := unsafe.Offsetof(o.mu), unsafe.Offsetof(o.B), unsafe.Offsetof(o.C)
	want := []string{
		fmt.Sprintf("%v+%d read=true", trace.OpAcquire, mu),
		fmt.Sprintf("%v+0 read=false", trace.OpRead),
		fmt.Sprintf("%v+%d read=false", trace.OpWrite, b),
		fmt.Sprintf("%v+%d read=false", trace.OpWrite, b+1),
		fmt.Sprintf("%v+%d read=false", trace.OpWrite, b+2),
		fmt.Sprintf("%v+%d read=false", trace.OpRead, c),
		fmt.Sprintf("%v+%d read=true", trace.OpRelease, mu),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
}

func TestLayoutUvarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 20, 1<<64 - 1} {
		s := string(binary.AppendUvarint(nil, v)) + "z"
		got, rest := layoutUvarint(s)
		if got != v || rest != "z" {
			t.Errorf("%d: got %d, rest %q", v, got, rest)
		}
	}
	if _, rest := layoutUvarint("\x80"); rest != "" {
		t.Errorf("truncated: rest %q", rest)
	}
}
