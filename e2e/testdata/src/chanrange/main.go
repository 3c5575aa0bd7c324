// A producer fills records and sends them; the consumer ranges over the
// channel and modifies each; the producer reads them after done.
package main

import "fmt"

type rec struct{ v int }

func main() {
	ch := make(chan *rec, 4)
	done := make(chan bool)
	var all []*rec
	go func() {
		n := 0
		for r := range ch {
			r.v *= 2
			n++
		}
		done <- n == 3
	}()
	for i := 0; i < 3; i++ {
		r := &rec{v: i}
		all = append(all, r)
		ch <- r
	}
	close(ch)
	ok := <-done
	fmt.Println(ok, all[2].v)
}
