package rt

import (
	"sync"
	"testing"
	"unsafe"
)

type promoted struct {
	n int
	sync.Mutex
}

type promotedRW struct {
	n int
	*sync.RWMutex
}

type nested struct {
	a int
	promoted
}

type declared struct {
	mu sync.Mutex
	sync.RWMutex
}

func (d *declared) Lock()   { d.mu.Lock() }
func (d *declared) Unlock() { d.mu.Unlock() }

// lockerObj finds the sync.Mutex or RWMutex a Locker's Lock locks: the
// Locker itself, or the one a struct embeds (promoted methods, at any
// depth, through a pointer too); not one behind a Lock the type declares
// (traced code, which records its own events).
func TestLockerObj(t *testing.T) {
	p := &promoted{}
	rw := &promotedRW{RWMutex: new(sync.RWMutex)}
	n := &nested{}
	d := &declared{}
	var mu sync.Mutex
	rw3 := new(sync.RWMutex)
	for _, c := range []struct {
		name string
		l    sync.Locker
		want unsafe.Pointer
		read bool
	}{
		{"mutex", &mu, unsafe.Pointer(&mu), false},
		{"embedded", p, unsafe.Pointer(&p.Mutex), false},
		{"embedded pointer", rw, unsafe.Pointer(rw.RWMutex), false},
		{"nested", n, unsafe.Pointer(&n.promoted.Mutex), false},
		{"declared Lock", d, nil, false},
		{"nil RWMutex pointer", &promotedRW{}, nil, false},
		{"RLocker", rw3.RLocker(), unsafe.Pointer(rw3), true},
	} {
		if got, read := lockerObj(c.l); got != c.want || read != c.read {
			t.Errorf("%s: lockerObj = %p, read %v, want %p, %v", c.name, got, read, c.want, c.read)
		}
	}
}
