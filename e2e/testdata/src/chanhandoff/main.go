// Ownership of a buffer passes through a buffered channel and back.
package main

import "fmt"

type job struct {
	data []int
	sum  int
}

func main() {
	jobs := make(chan *job, 2)
	results := make(chan *job)
	go func() {
		for j := range jobs {
			for _, v := range j.data {
				j.sum += v
			}
			results <- j
		}
		close(results)
	}()
	j := &job{data: []int{1, 2, 3}}
	jobs <- j
	r := <-results
	r.data[0] = 10
	jobs <- r
	close(jobs)
	for r := range results {
		fmt.Println(r.sum)
	}
}
