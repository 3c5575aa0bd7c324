// Package tickerleak: channel, a range over a ticker's channel. Stop does
// not close a ticker's channel, so the loop waits for a tick forever.
//
// truth: leak
package tickerleak

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	var polls atomic.Int64
	tk := time.NewTicker(time.Millisecond)
	go func() {
		for range tk.C {
			polls.Add(1)
		}
	}()
	time.Sleep(5 * time.Millisecond)
	tk.Stop() // the goroutine above never ends
	time.Sleep(10 * time.Millisecond)
}
