// Race-free churn of objects the standard library allocates (issue 28,
// memory reuse): each worker, alone, makes requests with http.NewRequest
// and (*http.Request).WithContext and writes their fields (the URL and
// Header NewRequest made for them too), splits strings
// and writes the parts, parses a query and writes its map, then drops them
// all. The garbage collector hands their memory out again to other
// workers' requests, slices and maps, and the workers never synchronize
// with each other: a detector that does not see these objects created
// relates the accesses of a dead one and a live one at one address (a
// routing library writing r.Pattern on each request did, under racekit:
// go-chi/chi's TestMuxContextIsThreadSafe). No race.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
)

const (
	workers = 4
	rounds  = 200
)

func worker(id int, u *url.URL, out *int) {
	total := 0
	for r := 0; r < rounds; r++ {
		req, err := http.NewRequest("GET", "/x", nil)
		if err != nil {
			panic(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req = req.WithContext(ctx)
		req.Pattern = fmt.Sprint(id)
		total += len(req.Pattern)
		req.URL.RawQuery = req.Pattern // the URL NewRequest made
		req.Header["X-Worker"] = nil   // and its Header
		total += len(req.URL.RawQuery) + len(req.Header)
		parts := strings.Split("a,b,c,d", ",")
		parts[id%4] = "x"
		total += len(parts[0])
		q := u.Query()
		q.Set("w", parts[1])
		total += len(q)
		cancel()
		if r%40 == 0 {
			runtime.GC()
		}
	}
	*out = total
}

func main() {
	u, _ := url.Parse("http://h/p?a=1&b=2")
	outs := make([]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(w, u, &outs[w])
		}()
	}
	wg.Wait()
	sum := 0
	for _, v := range outs {
		sum += v
	}
	fmt.Println(sum > 0)
}
