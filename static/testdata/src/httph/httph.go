// Package httph exercises net/http handlers as thread entry points: each
// handler runs on one goroutine per request, so it races with itself.
// (httpfake stands in for net/http.)
package httph

import (
	"sync"

	http "httpfake"
)

var hits int

func count(w http.ResponseWriter, r *http.Request) {
	hits++ // want `potential race on httph.hits: write at httph.go:15:2 in handler count registered at httph.go:44:17 holding no lock, and read at httph.go:15:2 in another instance of the same handler holding no lock`
}

type stats struct {
	mu     sync.Mutex
	served int
	last   string
}

// ServeHTTP updates served under the lock and last without it.
func (s *stats) ServeHTTP(w http.ResponseWriter, r *http.Request) { // want ServeHTTP:`lock \(\{\}, \{s.mu\}\)`
	s.mu.Lock()
	s.served++
	s.mu.Unlock()
	s.last = r.Path // want `potential race on st.last: write at httph.go:29:4 in handler \(\*stats\).ServeHTTP registered at httph.go:45:13 holding no lock, and write at httph.go:29:4 in another instance of the same handler holding no lock`
}

type api struct{ calls int }

func (a *api) list(w http.ResponseWriter, r *http.Request) {
	a.calls++ // want `potential race on a.calls: write at httph.go:35:4 in handler \(\*api\).list\$bound registered at httph.go:47:16 holding no lock, and read at httph.go:35:4 in another instance of the same handler holding no lock`
}

// hello only reads a package variable: no race.
var greeting = "hello"

func hello(w http.ResponseWriter, r *http.Request) { _ = greeting }

func serve(st *stats, a *api) {
	http.HandleFunc("/count", count)
	http.Handle("/stats", st)
	mux := http.NewServeMux()
	mux.HandleFunc("/api", a.list)
	mux.HandleFunc("/hello", hello)
}

// local registers a handler bound to an object it allocates: all requests
// share that object.
func local() {
	p := &page{}
	http.HandleFunc("/local", p.show)
}

type page struct{ views int }

func (p *page) show(w http.ResponseWriter, r *http.Request) {
	p.views++ // want `potential race on new@httph.go:54:12.views: write at httph.go:61:4 in handler \(\*page\).show\$bound registered at httph.go:55:17 holding no lock, and read at httph.go:61:4 in another instance of the same handler holding no lock`
}
