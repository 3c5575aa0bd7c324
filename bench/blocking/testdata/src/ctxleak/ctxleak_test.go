// Package ctxleak: channel, a context that is never cancelled. A watcher
// waits for its context to be done; the caller drops the cancel function.
//
// truth: leak
package ctxleak

import (
	"context"
	"testing"
	"time"
)

func watch(ctx context.Context, events chan<- string) {
	go func() {
		<-ctx.Done()
		events <- "stopped"
	}()
}

type session struct {
	cancel context.CancelFunc // Close should call it; nothing does
}

func TestWatch(t *testing.T) {
	s := &session{}
	var ctx context.Context
	ctx, s.cancel = context.WithCancel(context.Background())
	watch(ctx, make(chan string, 1))
	time.Sleep(10 * time.Millisecond)
}
