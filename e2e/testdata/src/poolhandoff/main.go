// A buffer handed from one goroutine to another through a sync.Pool.
package main

import (
	"fmt"
	"sync"
)

func main() {
	p := &sync.Pool{}
	done := make(chan bool)
	buf := make([]byte, 8)
	go func() {
		buf[0] = 1
		p.Put(&buf)
		done <- true
	}()
	<-done
	if b, ok := p.Get().(*[]byte); ok {
		(*b)[0] = 2
		fmt.Println((*b)[0])
	}
}
