package stdraces

import (
	"expvar"
	"log/slog"
	"mime"
	"os"
	"sync"
	"testing"
	"time"
)

// Mutexes inside the standard library, which racekit sees through the
// hook of the patched package sync (rt/synchook.go), as Go's race
// detector sees them: an Unlock before the next Lock, an RWMutex's write
// Unlock before later RLocks, and no order between two readers.

// expvar.Map's Set adds a new key under the map's keysMu; Do reads the
// keys under its read lock: what came before the Set is ordered before
// what comes after a Do that saw the key.
func TestNoRaceExpvarMapSet(t *testing.T) {
	m := new(expvar.Map).Init()
	x := new(int)
	go func() {
		*x = 1
		m.Set("a", new(expvar.Int))
	}()
	for {
		found := false
		m.Do(func(kv expvar.KeyValue) { found = found || kv.Key == "a" })
		if found {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the key")
	}
}

// os.Setenv writes the environment under syscall's envLock, Getenv reads
// it under the read lock.
func TestNoRaceSetenvGetenv(t *testing.T) {
	const key = "RACEKIT_STDRACES_SETENV"
	defer os.Unsetenv(key)
	x := new(int)
	go func() {
		*x = 1
		os.Setenv(key, "1")
	}()
	for os.Getenv(key) == "" {
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the variable")
	}
}

// lines is an io.Writer that keeps what it is given: slog's handlers call
// Write under their mutex.
type lines struct{ got []string }

func (l *lines) Write(p []byte) (int, error) {
	l.got = append(l.got, string(p))
	return len(p), nil
}

func TestNoRaceSlogHandlerWrites(t *testing.T) {
	w := &lines{}
	log := slog.New(slog.NewTextHandler(w, nil))
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Info("hello", "i", i)
		}()
	}
	wg.Wait()
	if len(w.got) != 4 {
		t.Fatalf("%d lines, want 4", len(w.got))
	}
}

// Two readers of one RWMutex are not ordered by it: each one's Do takes
// the read lock only.
func TestRaceStdReadLocksOrderNothing(t *testing.T) {
	m := new(expvar.Map).Init()
	m.Set("a", new(expvar.Int))
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: readers
		m.Do(func(expvar.KeyValue) {})
		done <- true
	}()
	time.Sleep(10 * time.Millisecond)
	m.Do(func(expvar.KeyValue) {})
	sink = *x // race: readers
	<-done
}

// sync.Maps inside the standard library, which racekit sees through the
// same patched package: mime keeps its types in one, so what came before
// an AddExtensionType is ordered before what comes after the
// TypeByExtension that found the type; two lookups order nothing.

func TestNoRaceMimeAddExtensionType(t *testing.T) {
	x := new(int)
	go func() {
		*x = 1
		mime.AddExtensionType(".racekit-add", "text/x-racekit-add")
	}()
	for mime.TypeByExtension(".racekit-add") == "" {
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the type")
	}
}

func TestRaceMimeLookupsOrderNothing(t *testing.T) {
	mime.AddExtensionType(".racekit-get", "text/x-racekit-get")
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: lookups
		_ = mime.TypeByExtension(".racekit-get")
		done <- true
	}()
	time.Sleep(10 * time.Millisecond)
	_ = mime.TypeByExtension(".racekit-get")
	sink = *x // race: lookups
	<-done
}

// atomic.Values inside the standard library, seen through the patched
// package sync/atomic: an expvar.String keeps its value in one, so what came
// before a Set is ordered before what comes after the Value that saw it;
// two Values (loads) order nothing.

func TestNoRaceExpvarStringSet(t *testing.T) {
	s := new(expvar.String)
	x := new(int)
	go func() {
		*x = 1
		s.Set("v")
	}()
	for s.Value() == "" {
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the value")
	}
}

func TestRaceExpvarStringValuesOrderNothing(t *testing.T) {
	s := new(expvar.String)
	s.Set("v")
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: values
		_ = s.Value()
		done <- true
	}()
	time.Sleep(10 * time.Millisecond)
	_ = s.Value()
	sink = *x // race: values
	<-done
}

// rt records an untraced Load only when a store came since the goroutine's
// last recorded Load of the Value (rt/valuehook.go): a Set after Loads
// already recorded still orders what came before it.

func TestNoRaceExpvarStringSetAgain(t *testing.T) {
	s := new(expvar.String)
	s.Set("a")
	for i := 0; i < 3; i++ {
		_ = s.Value()
	}
	x := new(int)
	go func() {
		*x = 1
		s.Set("b")
	}()
	for s.Value() != "b" {
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the value")
	}
}

func TestNoRaceExpvarStringsLoadedInTurn(t *testing.T) {
	var s [4]expvar.String
	for i := range s {
		s[i].Set("a")
	}
	x := new(int)
	go func() {
		time.Sleep(5 * time.Millisecond)
		*x = 1
		s[3].Set("b")
	}()
	for {
		v := ""
		for i := range s {
			v = s[i].Value()
		}
		if v == "b" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the value")
	}
}

func TestRaceExpvarStringWriteAfterSet(t *testing.T) {
	s := new(expvar.String)
	s.Set("a")
	_ = s.Value()
	x := new(int)
	go func() {
		s.Set("b")
		*x = 1 // race: setfirst
	}()
	for s.Value() != "b" {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	sink = *x // race: setfirst
}

// Typed atomics inside the standard library (sync/atomic's Bool, Int64,
// Pointer...), seen through the patched sync/atomic: an expvar.Int's Add,
// an expvar.Float's Set (an atomic.Uint64), slog.SetDefault's Pointer
// order what came before them before the load that saw them; two loads
// order nothing. The atomics inside an RWMutex and a WaitGroup, which the
// race build does not see, order nothing either.

func TestNoRaceExpvarIntAdd(t *testing.T) {
	c := new(expvar.Int)
	x := new(int)
	go func() {
		*x = 1
		c.Add(1)
	}()
	for c.Value() == 0 {
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the add")
	}
}

func TestNoRaceExpvarFloatSet(t *testing.T) {
	c := new(expvar.Float)
	x := new(int)
	go func() {
		*x = 1
		c.Set(1)
	}()
	for c.Value() == 0 {
		time.Sleep(time.Millisecond)
	}
	if *x != 1 {
		t.Fatal("x not set before the value")
	}
}

type countingHandler struct {
	slog.Handler
	n int
}

func TestNoRaceSlogSetDefault(t *testing.T) {
	old := slog.Default()
	defer slog.SetDefault(old)
	h := &countingHandler{Handler: old.Handler()}
	go func() {
		h.n = 1
		slog.SetDefault(slog.New(h))
	}()
	for {
		if d, ok := slog.Default().Handler().(*countingHandler); ok {
			if d.n != 1 {
				t.Fatal("n not set before the default")
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRaceExpvarIntValuesOrderNothing(t *testing.T) {
	c := new(expvar.Int)
	c.Add(1)
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: ints
		_ = c.Value()
		done <- true
	}()
	time.Sleep(10 * time.Millisecond)
	_ = c.Value()
	sink = *x // race: ints
	<-done
}

func TestRaceWaitGroupDonesOrderNothing(t *testing.T) {
	var wg sync.WaitGroup
	x := new(int)
	wg.Add(2)
	go func() {
		*x = 1 // race: dones
		wg.Done()
	}()
	go func() {
		time.Sleep(10 * time.Millisecond)
		*x = 2 // race: dones
		wg.Done()
	}()
	wg.Wait()
}
