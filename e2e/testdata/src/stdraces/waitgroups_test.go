package stdraces

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// WaitGroups inside the standard library, which racekit sees through the
// hook of the patched package sync (rt/synchook.go): httptest.Server.Close
// waits, on a WaitGroup, for the connections its handlers ran on, so
// what a handler did is ordered before Close returns.

// counted is a handler that counts its requests under a lock, after a
// delay that outlasts the client's cancelled request; started is closed
// when the first begins (before the count: it orders nothing after it).
type counted struct {
	started chan struct{}
	once    sync.Once
	mu      sync.Mutex
	n       int
}

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.once.Do(func() { close(c.started) })
	time.Sleep(20 * time.Millisecond)
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// minio-go's TestComposeObjectParallelPartFailure: the client gives up on
// its request, the handler goes on and counts it, and the test reads the
// count without the lock, after Close.
func TestNoRaceHTTPTestServerClose(t *testing.T) {
	c := &counted{started: make(chan struct{})}
	srv := httptest.NewServer(c)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-c.started
	cancel()
	<-done
	srv.Close()
	if c.n != 1 {
		t.Errorf("n = %d, want 1", c.n)
	}
}
