package rt

import (
	"io"
	"log"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

type cbLogger struct {
	prefix string
	mu     sync.Mutex
}

// A marked call's Write (one frame below the caller: std's frames are not
// traced) records the acquire and release of the call's mutex once, around
// the Writes it makes (a filter's Write calling the next writer's); a
// marked call that called none (an untraced writer) records them at its
// return (CallbackDone); a Write after it, or one the marked call's
// arguments make before it, records nothing.
func TestCallbackLock(t *testing.T) {
	l := escape[cbLogger]()
	lay := "l" + string(rune(unsafe.Offsetof(l.mu))) // one uvarint byte
	if unsafe.Offsetof(l.mu) >= 0x80 {
		t.Fatal("offset takes more than one byte")
	}
	write := func(site uint32, inner func()) {
		Enter(site)
		WriteEnter()
		if inner != nil {
			inner()
		}
		WriteLeave()
		Leave(site)
	}
	tr := record(t, false, func(site uint32) {
		Enter(site) // the caller's frame
		CallbackLock(l, lay, site)
		write(site, func() { write(site, nil) }) // std calls the filter, which calls the writer
		CallbackDone(site)
		CallbackLockArg("x", l, lay, site)
		CallbackDone(site) // an untraced writer: no Write
		write(site, nil)   // a Write of the caller's own
		Leave(site)
	})
	mu := uint64(uintptr(unsafe.Pointer(&l.mu)))
	var got []string
	for _, e := range tr.Events {
		if (e.Op == trace.OpAcquire || e.Op == trace.OpRelease) && e.Obj == mu {
			got = append(got, e.Op.String())
		}
	}
	acqRel := []string{trace.OpAcquire.String(), trace.OpRelease.String()}
	if want := slices.Concat(acqRel, acqRel); !slices.Equal(got, want) {
		t.Errorf("the mutex's events %q, want %q", got, want)
	}
	if g := cur(); len(g.cbLocks) != 0 {
		t.Errorf("%d marked calls left", len(g.cbLocks))
	}
}

// slogMutex finds the mutex slog's TextHandler and JSONHandler write
// under, the same for the Loggers With derives, and none for other
// handlers.
func TestSlogMutex(t *testing.T) {
	text := slog.New(slog.NewTextHandler(io.Discard, nil))
	mu := slogMutex(reflect.ValueOf(text))
	if mu == nil {
		t.Fatal("no mutex for a TextHandler's Logger (slog's fields renamed?)")
	}
	if got := slogMutex(reflect.ValueOf(text.With("k", 1).WithGroup("g"))); got != mu {
		t.Errorf("a derived Logger's mutex %p, want %p", got, mu)
	}
	json := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if got := slogMutex(reflect.ValueOf(json)); got == nil || got == mu {
		t.Errorf("a JSONHandler's mutex %p (the TextHandler's: %p)", got, mu)
	}
	std := reflect.ValueOf(log.Default()).Elem().FieldByName("outMu").Addr().UnsafePointer()
	if got := slogMutex(reflect.ValueOf(slog.Default())); got != std {
		t.Errorf("slog's default Logger's mutex %p, want log's standard Logger's outMu %p", got, std)
	}
	for _, l := range []*slog.Logger{slog.New(slog.DiscardHandler), nil} {
		if got := slogMutex(reflect.ValueOf(l)); got != nil {
			t.Errorf("a mutex %p for %v", got, l)
		}
	}
}
