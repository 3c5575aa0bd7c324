// Package errcapture is the Go bug of closures that assign an error
// variable declared outside them: the goroutines (and the function that
// started them) write the one err concurrently, so an error can be lost or
// replaced by nil, and the caller may report success. Two forms: a fetch
// that runs one half in a goroutine and both halves assign the named
// result err; and a fan-out whose workers assign a shared err on failure.
// The fixed fan-out keeps one error per worker.
package errcapture

import (
	"errors"
	"fmt"
	"sync"
)

// Source is something that can fail.
type Source struct {
	Name string
	Fail bool
}

// Fetch returns a value or an error.
func (s Source) Fetch() (int, error) {
	if s.Fail {
		return 0, fmt.Errorf("%s: unavailable", s.Name)
	}
	return len(s.Name), nil
}

// FetchBoth fetches a in a goroutine and b in the caller; both assign the
// named result err.
func FetchBoth(a, b Source) (x, y int, err error) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Writes the caller's err while the caller writes it too.
		x, err = a.Fetch() // racekit:race id=ec-both kind=race benign=false
	}()
	y, err = b.Fetch() // racekit:race id=ec-both kind=race benign=false
	wg.Wait()
	return x, y, err
}

// CheckAllBuggy validates parts concurrently; a failing worker stores its
// error in the shared err. Two failures write it at once.
func CheckAllBuggy(parts []Source) error {
	var err error
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func(p Source) {
			defer wg.Done()
			if _, e := p.Fetch(); e != nil {
				err = e // racekit:race id=ec-fanout kind=race benign=false self
			}
		}(p)
	}
	wg.Wait()
	return err
}

// CheckAll is the fix: one slot per worker, joined after Wait.
func CheckAll(parts []Source) error {
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func(i int, p Source) {
			defer wg.Done()
			_, errs[i] = p.Fetch()
		}(i, p)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Config sizes a run.
type Config struct {
	Parts    int
	Failures int // failing parts (at least two make the fan-out race)
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Parts: 6, Failures: 3} }

// Result is what the buggy and fixed versions reported.
type Result struct {
	BothErr   bool // FetchBoth(failing, ok) reported an error
	BuggyErr  bool // CheckAllBuggy reported an error
	FixedErrs int  // errors CheckAll joined
}

// Run exercises both bugs and the fix.
func Run(cfg Config) Result {
	var r Result
	_, _, err := FetchBoth(Source{Name: "a", Fail: true}, Source{Name: "bb"})
	r.BothErr = err != nil
	parts := make([]Source, cfg.Parts)
	for i := range parts {
		parts[i] = Source{Name: fmt.Sprintf("p%d", i), Fail: i < cfg.Failures}
	}
	r.BuggyErr = CheckAllBuggy(parts) != nil
	if err := CheckAll(parts); err != nil {
		r.FixedErrs = len(err.(interface{ Unwrap() []error }).Unwrap())
	}
	return r
}
