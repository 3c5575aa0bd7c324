package httpsvc

import (
	"sync"
	"time"
)

// RateLimiter is a fixed-window limiter per client, correctly locked.
type RateLimiter struct {
	mu      sync.Mutex
	windows map[string]*window
	limit   int
	span    time.Duration
	denied  int
}

type window struct {
	start time.Time
	count int
}

// NewRateLimiter allows limit requests per client per span.
func NewRateLimiter(limit int, span time.Duration) *RateLimiter {
	return &RateLimiter{windows: map[string]*window{}, limit: limit, span: span}
}

// Allow reports whether client may make a request now.
func (r *RateLimiter) Allow(client string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.windows[client]
	if !ok || now.Sub(w.start) >= r.span {
		w = &window{start: now}
		r.windows[client] = w
	}
	if w.count >= r.limit {
		r.denied++
		return false
	}
	w.count++
	return true
}

// SetLimit changes the limit (on reload).
func (r *RateLimiter) SetLimit(limit int) {
	r.mu.Lock()
	r.limit = limit
	r.mu.Unlock()
}

// Denied is the number of refused requests.
func (r *RateLimiter) Denied() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.denied
}

// Prune forgets windows that ended before now.
func (r *RateLimiter) Prune(now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for c, w := range r.windows {
		if now.Sub(w.start) >= r.span {
			delete(r.windows, c)
			n++
		}
	}
	return n
}
