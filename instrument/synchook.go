package instrument

import "strings"

// The standard library's WaitGroups. Go's race detector instruments
// package sync: every wg.Done (Add with a negative delta) is ordered
// before the return of a wg.Wait, also when both are inside std or an
// untraced dependency (httptest.Server.Close waits for the connections
// its handlers ran on: held-out minio-go's TestComposeObjectParallelPartFailure
// read, after Close, a counter a handler had written under a lock the
// test did not take, a false race under racekit until this hook). rt sees
// the WaitGroups of traced code only. The sync package patched here calls
// a function rt installs where the race build has its annotations
// (ReleaseMerge in Add, Acquire when Wait returns), and rt records them as
// a release and an acquire of the WaitGroup, the objects traced code's
// WaitGroup hooks use (rt/synchook.go). Only when sync/waitgroup.go has
// the exact text below.

// wgEdits are the edits of sync/waitgroup.go: old text, new text, and
// how many times the old text occurs.
var wgEdits = []struct {
	old, new string
	n        int
}{
	{
		"func (wg *WaitGroup) Add(delta int) {\n\tif race.Enabled {\n",
		"func (wg *WaitGroup) Add(delta int) {\n\tif delta < 0 && racekitSyncHook != nil {\n\t\tracekitSyncHook(unsafe.Pointer(wg), 0)\n\t}\n\tif race.Enabled {\n",
		1,
	},
	{
		"\t\t\t\trace.Acquire(unsafe.Pointer(wg))\n\t\t\t}\n",
		"\t\t\t\trace.Acquire(unsafe.Pointer(wg))\n\t\t\t}\n\t\t\tif racekitSyncHook != nil {\n\t\t\t\tracekitSyncHook(unsafe.Pointer(wg), 1)\n\t\t\t}\n",
		2,
	},
}

// wgFuncs is appended to sync/waitgroup.go.
const wgFuncs = `
// racekitSyncHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_synchook.go file racekit adds to it): op 0 a WaitGroup's
// decrement, 1 the return of its Wait.
//
//go:linkname racekitSyncHook
var racekitSyncHook func(p unsafe.Pointer, op uint8)
`

// rtSyncHookFile is the file added to rt's copy with the WaitGroup hook.
const rtSyncHookFile = `package rt

import "unsafe"

//go:linkname racekitSyncHook sync.racekitSyncHook
var racekitSyncHook func(p unsafe.Pointer, op uint8)

var _ = func() bool {
	setSyncHook = func(h func(p unsafe.Pointer, op uint8)) { racekitSyncHook = h }
	return true
}()
`

// wgPatch returns sync/waitgroup.go with the hook's calls, or false when
// it lacks a text it edits (then rt sees traced code's WaitGroups only).
func wgPatch(src string) (string, bool) {
	for _, e := range wgEdits {
		if strings.Count(src, e.old) != e.n {
			return "", false
		}
	}
	for _, e := range wgEdits {
		src = strings.ReplaceAll(src, e.old, e.new)
	}
	return src + wgFuncs, true
}
