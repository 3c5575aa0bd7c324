package rt

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// The goroutine time.AfterFunc starts for one of rt's timers runs
// rtsysCallback's closure, whose name must begin with rtsys for the
// patched runtime to count it as its own (instrument's racekitOwnFunc): an
// inlined rtsysCallback would name its closure after the caller.
func TestSysCallbackName(t *testing.T) {
	f := runtime.FuncForPC(sysCallbackPC())
	if f == nil {
		t.Fatal("no function at rtsysCallback's closure")
	}
	if want := "github.com/racekit/racekit/rt.rtsys"; !strings.HasPrefix(f.Name(), want) {
		t.Errorf("SysAfterFunc's callback is %s, want a name beginning with %s", f.Name(), want)
	}
	// SysAfterFunc runs the callback in a goroutine whose function is it.
	got := make(chan string, 1)
	SysAfterFunc(time.Millisecond, func() {
		pc := make([]uintptr, 8)
		n := runtime.Callers(2, pc) // above this literal
		frames := runtime.CallersFrames(pc[:n])
		fr, _ := frames.Next()
		got <- fr.Function
	})
	if name := <-got; name != f.Name() {
		t.Errorf("the callback's goroutine runs %s, want %s", name, f.Name())
	}
}
