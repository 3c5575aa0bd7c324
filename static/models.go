package static

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// modelOp is the modeled effect of a synchronization call. As in the
// paper, lock and unlock are calls whose relative lockset summaries are
// ({l}, {}) and ({}, {l}).
type modelOp uint8

const (
	opNone modelOp = iota
	opLock
	opUnlock
	opRLock
	opRUnlock
	opTryLock
	opTryRLock
	opWait  // WaitGroup.Wait, Cond.Wait
	opDone  // WaitGroup.Done
	opWGGo  // WaitGroup.Go(f): a goroutine that calls Done at its end
	opQuiet // other sync and sync/atomic calls: no data accesses
)

var syncModels = map[string]modelOp{
	"(*sync.Mutex).Lock":       opLock,
	"(*sync.Mutex).Unlock":     opUnlock,
	"(*sync.Mutex).TryLock":    opTryLock,
	"(*sync.RWMutex).Lock":     opLock,
	"(*sync.RWMutex).Unlock":   opUnlock,
	"(*sync.RWMutex).RLock":    opRLock,
	"(*sync.RWMutex).RUnlock":  opRUnlock,
	"(*sync.RWMutex).TryLock":  opTryLock,
	"(*sync.RWMutex).TryRLock": opTryRLock,
	"(*sync.WaitGroup).Wait":   opWait,
	"(*sync.WaitGroup).Done":   opDone,
	"(*sync.WaitGroup).Go":     opWGGo,
	"(*sync.Cond).Wait":        opWait,
}

// syncModel returns the model of a callee in package sync or sync/atomic,
// or opNone for any other function.
func syncModel(fn *ssa.Function) modelOp {
	if fn.Origin() != nil {
		fn = fn.Origin()
	}
	obj, _ := fn.Object().(*types.Func)
	if obj == nil || obj.Pkg() == nil {
		return opNone
	}
	switch obj.Pkg().Path() {
	case "sync", "sync/atomic":
	default:
		return opNone
	}
	if op, ok := syncModels[obj.FullName()]; ok {
		return op
	}
	return opQuiet
}

// lockerModel models Lock and Unlock called through the sync.Locker
// interface: the lock is the interface's dynamic value.
func lockerModel(m *types.Func) modelOp {
	if m == nil {
		return opNone
	}
	switch m.FullName() {
	case "(sync.Locker).Lock":
		return opLock
	case "(sync.Locker).Unlock":
		return opUnlock
	}
	return opNone
}

func isSyncModelCall(c *ssa.CallCommon) bool {
	if f := c.StaticCallee(); f != nil {
		return syncModel(f) != opNone
	}
	return c.IsInvoke() && lockerModel(c.Method) != opNone
}

var httpRegistrations = map[string]bool{
	"net/http.HandleFunc":             true,
	"net/http.Handle":                 true,
	"(*net/http.ServeMux).HandleFunc": true,
	"(*net/http.ServeMux).Handle":     true,
}

// httpRegistration reports whether fn registers a net/http handler.
func httpRegistration(fn *ssa.Function) bool {
	obj, _ := fn.Object().(*types.Func)
	return obj != nil && httpRegistrations[obj.FullName()]
}

// noAccessPackage reports callees whose memory operations are not data
// accesses of the program: the runtime's and the synchronization
// primitives' own state.
func noAccessPackage(fn *ssa.Function) bool {
	p := fn.Pkg
	var path string
	if p != nil {
		path = p.Pkg.Path()
	} else if obj := fn.Object(); obj != nil && obj.Pkg() != nil {
		path = obj.Pkg().Path()
	}
	switch path {
	case "runtime", "unsafe", "sync", "sync/atomic", "internal/race", "internal/sync":
		return true
	}
	return strings.HasPrefix(path, "internal/runtime/") || strings.HasPrefix(path, "runtime/internal/")
}

// timerCallbacks start their last argument on a goroutine of its own
// later (time.AfterFunc): a thread entry like a go statement.
var timerCallbacks = map[string]bool{
	"time.AfterFunc": true,
}

func timerCallback(fn *ssa.Function) bool {
	obj, _ := fn.Object().(*types.Func)
	return obj != nil && timerCallbacks[obj.FullName()]
}

// subtestRuns run their function argument as a subtest; parallelCalls
// make the calling test parallel.
var (
	subtestRuns   = map[string]bool{"(*testing.T).Run": true}
	parallelCalls = map[string]bool{"(*testing.T).Parallel": true}
)

// parallelSubtest says whether call c of fn is (*testing.T).Run with a
// function that calls t.Parallel: a thread entry (entrySubtest).
func parallelSubtest(fn *ssa.Function, c *ssa.CallCommon) bool {
	obj, _ := fn.Object().(*types.Func)
	if obj == nil || !subtestRuns[obj.FullName()] || len(c.Args) == 0 {
		return false
	}
	f := funcOf(c.Args[len(c.Args)-1])
	if f == nil {
		return false
	}
	_, ok := parallelPoint(f)
	return ok
}

// funcOf is the function a func value is made from, or nil.
func funcOf(v ssa.Value) *ssa.Function {
	for {
		switch x := v.(type) {
		case *ssa.ChangeType:
			v = x.X
		case *ssa.MakeInterface:
			v = x.X
		case *ssa.MakeClosure:
			f, _ := x.Fn.(*ssa.Function)
			return f
		case *ssa.Function:
			return x
		default:
			return nil
		}
	}
}

// parallelPoint is the program point of fn's first (*testing.T).Parallel
// call: a parallel test runs beside the others only from there on.
func parallelPoint(fn *ssa.Function) (progPoint, bool) {
	for bi, b := range fn.Blocks {
		for ii, instr := range b.Instrs {
			call, ok := instr.(*ssa.Call)
			if !ok {
				continue
			}
			if callee := call.Common().StaticCallee(); callee != nil {
				if obj, _ := callee.Object().(*types.Func); obj != nil && parallelCalls[obj.FullName()] {
					return progPoint{int32(bi), int32(ii)}, true
				}
			}
		}
	}
	return progPoint{}, false
}
