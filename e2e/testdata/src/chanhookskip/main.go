// Command chanhookskip makes channel operations of traced code (sends,
// receives, a range, selects with and without a default, buffered and
// unbuffered, no close) and of untraced code (an io.Pipe's, inside std),
// race-free. e2e TestChanHookSkips reads its trace: the runtime's channel
// hook records the untraced ones and none of the traced ones.
package main

import (
	"fmt"
	"io"
)

func main() {
	ping, pong := make(chan int), make(chan int)
	buf := make(chan int, 4)
	quit := make(chan bool)
	go func() {
		for v := range ping {
			select {
			case buf <- v:
			default:
			}
			pong <- v + 1
		}
		quit <- true
	}()
	sum := 0
	for i := 0; i < 200; i++ {
		ping <- i
		sum += <-pong
		select {
		case v := <-buf:
			sum += v
		case <-quit:
		default:
		}
	}
	for len(buf) > 0 {
		sum += <-buf
	}
	pr, pw := io.Pipe()
	go func() {
		fmt.Fprint(pw, "piped")
		pw.CloseWithError(nil)
	}()
	b, _ := io.ReadAll(pr)
	ping2 := ping
	ping = nil
	_ = ping
	close(ping2)
	<-quit
	fmt.Println(sum, string(b))
}
