package testingorder

import "testing"

// T is a test's interface as a test helper library keeps it
// (rogpeppe/go-internal's testscript.T): its dynamic value is shim, which
// embeds the *testing.T, so T.Parallel is testing.T's.
type T interface {
	Parallel()
	Run(name string, f func(T))
}

type shim struct{ *testing.T }

func (s shim) Run(name string, f func(T)) {
	s.T.Run(name, func(t *testing.T) { f(shim{t}) })
}

// RunParallelShim runs body in a parallel subtest of t, made parallel
// through T (testscript's RunT).
func RunParallelShim(t *testing.T, body func()) {
	var tt T = shim{t}
	tt.Run("shim", func(t T) {
		t.Parallel()
		body()
	})
}

// RunParallelAny runs body in a parallel subtest of tb, made parallel
// through an interface{ Parallel() } (frankban/quicktest's C.Parallel).
func RunParallelAny(t *testing.T, body func()) {
	t.Run("any", func(t *testing.T) {
		var tb testing.TB = t
		if p, ok := tb.(interface{ Parallel() }); ok {
			p.Parallel()
		}
		body()
	})
}
