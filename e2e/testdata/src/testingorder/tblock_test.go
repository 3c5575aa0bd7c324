package testingorder

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// Package testing's methods of a test lock the test's mutex (c.mu): Log,
// Error, Helper and Fail lock it, Failed and Skipped read-lock it. With
// -v, log lines also take the printer's lock, one for the binary. In the
// tests below a goroutine writes, calls one of them, then waits on a
// channel; the test waits until it sees it waiting (parked, which
// synchronizes nothing: runtime.Stack), then calls one, then reads. Only
// testing's locks order the two. The goroutine stays until the test's end:
// the race detector's slot of a goroutine that ended may go to the next
// one, whose accesses then seem ordered after the ended one's.

// parked waits until the goroutine running fn (its name as a stack prints
// it) waits on a channel receive.
func parked(fn string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for _, g := range bytes.Split(buf[:n], []byte("\n\n")) {
			if bytes.Contains(g, []byte("[chan receive")) && bytes.Contains(g, []byte(fn+"(")) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// hold is what the goroutines wait on; closed at the test's end.
func hold(t *testing.T) chan bool {
	c := make(chan bool)
	t.Cleanup(func() { close(c) })
	return c
}

// helperT is testify's tHelper: an assertion calls Helper through it.
type helperT interface{ Helper() }

// TestNoRaceLogThenHelper: a goroutine logs through the test after its
// write; the test calls Helper (through an interface, as testify's
// assertions do) after that, then reads (hashicorp/raft's
// TestNetworkTransport_ListenBackoff).
func TestNoRaceLogThenHelper(t *testing.T) {
	var x int
	wait := hold(t)
	go func() {
		x = 1
		t.Log("wrote")
		<-wait
	}()
	parked("TestNoRaceLogThenHelper.func1")
	var h helperT = t
	h.Helper()
	_ = x
}

// TestNoRaceLogfThenSkipped: a Logf through an interface of the code's
// own locks the test's mutex; Skipped read-locks it after that.
func TestNoRaceLogfThenSkipped(t *testing.T) {
	var x int
	var lg interface{ Logf(string, ...any) } = t
	wait := hold(t)
	go func() {
		x = 1
		lg.Logf("wrote %d", 1)
		<-wait
	}()
	parked("TestNoRaceLogfThenSkipped.func1")
	if t.Skipped() {
		return
	}
	_ = x
}

// The racing variables are package variables: the race detector reports
// a race on an address once per run, and two tests' locals may share an
// address.
var failedX, quietX int

// TestRaceFailedThenFailed: two read locks of the test's mutex do not
// order each other.
func TestRaceFailedThenFailed(t *testing.T) {
	x := &failedX
	wait := hold(t)
	go func() {
		*x = 1 // race: failed
		_ = t.Failed()
		<-wait
	}()
	parked("TestRaceFailedThenFailed.func1")
	_ = t.Failed()
	_ = *x // race: failed
}

// TestRaceQuietLogs: without -v, the parent's log line and the subtest's
// Helper take two mutexes, which do not order them (TestNoRaceVerboseLogs:
// with -v a log line of the subtest would). Not a log line in the subtest:
// fmt's printers come from a sync.Pool, whose Put and Get the race
// detector orders when the subtest gets the printer the parent's log put
// back (it does in some runs).
func TestRaceQuietLogs(t *testing.T) {
	if testing.Verbose() {
		t.Skip("without -v only")
	}
	x := &quietX
	wait := hold(t)
	go func() {
		*x = 1 // race: quietlogs
		t.Log("wrote")
		<-wait
	}()
	t.Run("sub", func(t *testing.T) {
		parked("TestRaceQuietLogs.func1")
		t.Helper()
		_ = *x // race: quietlogs
	})
}

// TestNoRaceVerboseLogs: with -v, the log lines of every test take the
// printer's lock.
func TestNoRaceVerboseLogs(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("with -v only")
	}
	var x int
	wait := hold(t)
	go func() {
		x = 1
		t.Log("wrote")
		<-wait
	}()
	t.Run("sub", func(t *testing.T) {
		parked("TestNoRaceVerboseLogs.func1")
		t.Log("reads")
		_ = x
	})
}
