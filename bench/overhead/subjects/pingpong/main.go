// Command pingpong is a synchronization-heavy micro-benchmark (as
// LiteRace's LFList, §5.4): two goroutines pass a token back and forth over
// unbuffered channels, each exchange a send and a receive on each side,
// with a little work on the token in between. Race-free.
package main

import (
	"flag"
	"fmt"
)

type token struct {
	hops int
	sum  int
}

func bounce(t *token, k int) *token {
	t.hops++
	t.sum += k
	return t
}

func main() {
	rounds := flag.Int("n", 300_000, "round trips")
	flag.Parse()
	ping, pong := make(chan *token), make(chan *token)
	done := make(chan bool)
	go func() {
		for t := range ping {
			pong <- bounce(t, 1)
		}
		close(done)
	}()
	t := &token{}
	for i := 0; i < *rounds; i++ {
		ping <- bounce(t, i)
		t = <-pong
	}
	close(ping)
	<-done
	fmt.Println(t.hops, t.sum)
}
