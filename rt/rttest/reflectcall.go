package rttest

import (
	"reflect"
	"testing"

	"github.com/racekit/racekit/rt"
)

func init() { rt.SetReflectRun(reflectRun) }

// runFuncs are the code pointers of testing's T.Run and B.Run as
// reflection hands them out (Type.MethodByName("Run").Func).
var runFuncs = rt.OwnOnceValues(func() (uintptr, uintptr) {
	t, _ := reflect.TypeFor[*testing.T]().MethodByName("Run")
	b, _ := reflect.TypeFor[*testing.B]().MethodByName("Run")
	return t.Func.Pointer(), b.Func.Pointer()
})

// reflectRun makes v.Call(in) through Run's model (RunWrap, RunBWrap) when
// v is testing's T.Run or B.Run called with its receiver as first argument,
// as go-testdeep's td.T.Run calls it (rt.ReflectCall); ok is false for any
// other call, which rt makes as it is.
func reflectRun(v reflect.Value, in []reflect.Value, site uint32) (out []reflect.Value, ok bool) {
	if v.Kind() != reflect.Func || len(in) != 3 || in[1].Kind() != reflect.String || !in[0].CanInterface() || !in[2].CanInterface() {
		return nil, false
	}
	tRun, bRun := runFuncs()
	switch v.Pointer() {
	case tRun:
		t, _ := in[0].Interface().(*testing.T)
		f, _ := in[2].Interface().(func(*testing.T))
		if t != nil && f != nil {
			return []reflect.Value{reflect.ValueOf(RunWrap(t, in[1].String(), f, site))}, true
		}
	case bRun:
		b, _ := in[0].Interface().(*testing.B)
		f, _ := in[2].Interface().(func(*testing.B))
		if b != nil && f != nil {
			return []reflect.Value{reflect.ValueOf(RunBWrap(b, in[1].String(), f, site))}, true
		}
	}
	return nil, false
}
