// Package testingfake stands for package testing in the analyzer's tests
// (export_test.go): testing's dependencies take minutes to analyze under
// -race. Run runs f on a goroutine of its own and waits unless f called
// Parallel, as testing.T.Run does.
package testingfake

type T struct {
	parallel chan bool
	done     chan bool
}

func (t *T) Run(name string, f func(t *T)) bool {
	sub := &T{parallel: make(chan bool, 1), done: make(chan bool, 1)}
	go func() {
		f(sub)
		sub.done <- true
	}()
	select {
	case <-sub.parallel:
	case <-sub.done:
	}
	return true
}

func (t *T) Parallel() { t.parallel <- true }
