// A race on an object the standard library allocated: the request
// WithContext returns is shared with a goroutine, and both write its
// Pattern with nothing between. The allocation recorded when WithContext
// returns comes before the sharing, so it hides nothing: one race,
// main.go:22 and main.go:25 (TestPrograms checks it).
package main

import (
	"context"
	"fmt"
	"net/http"
)

func main() {
	req, err := http.NewRequest("GET", "/x", nil)
	if err != nil {
		panic(err)
	}
	req = req.WithContext(context.Background())
	done := make(chan bool)
	go func() {
		req.Pattern = "/a" // race: p
		done <- true
	}()
	req.Pattern = "/b" // race: p
	<-done
	fmt.Println(req.Pattern != "")
}
