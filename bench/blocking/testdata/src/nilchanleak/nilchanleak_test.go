// Package nilchanleak: channel, a send on a nil channel. The notifier's
// channel is only made when a listener registers; without one, the
// notifying goroutine blocks forever on the nil channel.
//
// truth: leak
package nilchanleak

import (
	"testing"
	"time"
)

type notifier struct {
	ch chan string
}

func (n *notifier) listen() <-chan string {
	n.ch = make(chan string, 1)
	return n.ch
}

func (n *notifier) notify(msg string) {
	go func() { n.ch <- msg }()
}

func TestNotifyWithoutListener(t *testing.T) {
	n := &notifier{}
	n.notify("hello")
	time.Sleep(10 * time.Millisecond)
}
