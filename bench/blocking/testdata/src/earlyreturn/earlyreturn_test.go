// Package earlyreturn: channel and error path. Search starts one goroutine
// per shard, each sending its result on an unbuffered channel, and returns
// at the first hit: the other senders block forever (here the shards
// without a hit are slower, so both are left behind).
//
// truth: leak
package earlyreturn

import (
	"testing"
	"time"
)

func search(shards [][]int, x int) bool {
	found := make(chan bool)
	for _, s := range shards {
		go func() {
			for _, v := range s {
				if v == x {
					found <- true
					return
				}
			}
			time.Sleep(5 * time.Millisecond) // a miss scans to the end
			found <- false
		}()
	}
	for range shards {
		if <-found {
			return true // the other senders are left blocked
		}
	}
	return false
}

func TestSearch(t *testing.T) {
	if !search([][]int{{1, 2}, {3, 4}, {5, 6}}, 1) {
		t.Fatal("not found")
	}
	time.Sleep(10 * time.Millisecond)
}
