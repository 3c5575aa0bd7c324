package rt

import (
	"reflect"

	"github.com/racekit/racekit/trace"
)

// globalVars are the traced packages' package-level variables, named in
// every trace (trace.GlobalName): a report says which variable a raced
// address is in, as Go's race report does ("Location is global ...").
var globalVars []trace.Name // under defMu

// Globals names package-level variables: vars alternates a pointer to each
// and its name (package path, a dot, its name). Instrumented files call it
// in a package-level declaration (var _ = rt.Globals(&x, "p.x", ...)), so
// it runs while the package is initialized; it returns true.
func Globals(vars ...any) bool {
	defMu.Lock()
	defer defMu.Unlock()
	for i := 0; i+1 < len(vars); i += 2 {
		p := reflect.ValueOf(vars[i])
		name, ok := vars[i+1].(string)
		if !ok || p.Kind() != reflect.Pointer || p.IsNil() || p.Type().Elem().Size() == 0 {
			continue
		}
		n := trace.Name{Obj: uint64(p.Pointer()), Name: trace.GlobalName(name, uint64(p.Type().Elem().Size()))}
		globalVars = append(globalVars, n)
		if on {
			defs = append(defs, def{name: &n})
		}
	}
	return true
}
