package p

import "runtime"

// runtime is used only by calls that become hooks (rt.SetFinalizer,
// rt.AddCleanup): its import must stay used (go-msgpack's codec).

type buf struct{ b []byte }

func track(x *buf, y *[4]int) {
	runtime.SetFinalizer(x, func(x *buf) { x.b = nil })
	runtime.SetFinalizer(x, nil)
	runtime.AddCleanup(x, func(y *[4]int) { y[0] = 1 }, y)
}
