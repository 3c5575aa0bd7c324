// Two goroutines write one map.
package main

import "fmt"

func main() {
	m := map[string]int{}
	done := make(chan bool)
	go func() {
		m["a"] = 1 // race: m
		done <- true
	}()
	m["b"] = 2 // race: m
	<-done
	fmt.Println(len(m))
}
