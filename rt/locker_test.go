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
	for _, c := range []struct {
		name string
		l    sync.Locker
		want unsafe.Pointer
	}{
		{"mutex", &mu, unsafe.Pointer(&mu)},
		{"embedded", p, unsafe.Pointer(&p.Mutex)},
		{"embedded pointer", rw, unsafe.Pointer(rw.RWMutex)},
		{"nested", n, unsafe.Pointer(&n.promoted.Mutex)},
		{"declared Lock", d, nil},
		{"nil RWMutex pointer", &promotedRW{}, nil},
		{"RLocker", mu2().RLocker(), nil},
	} {
		if got := lockerObj(c.l); got != c.want {
			t.Errorf("%s: lockerObj = %p, want %p", c.name, got, c.want)
		}
	}
}

func mu2() *sync.RWMutex { return new(sync.RWMutex) }
