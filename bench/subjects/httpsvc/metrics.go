package httpsvc

import (
	"sort"
	"sync"
	"time"
)

// Metrics are the service's request counters. They are plain fields,
// bumped by every handler without a lock (the bug: lost counts, and torn
// snapshots), and read by the stats endpoint. Only the per-route table,
// which is a map (and would crash under concurrent writes), is locked.
type Metrics struct {
	requests  int           // racy: bumped by every request
	errors    int           // racy
	byClass   [6]int        // racy: responses by status class (1xx..5xx)
	latency   time.Duration // racy: total handler time
	slowest   time.Duration // racy: max handler time
	routesMu  sync.Mutex
	routes    map[string]int // per-route counts, under routesMu
	startedAt time.Time
}

// NewMetrics returns zeroed metrics.
func NewMetrics() *Metrics {
	return &Metrics{routes: map[string]int{}, startedAt: time.Now()}
}

// observe records one request.
func (m *Metrics) observe(route string, status int, d time.Duration) {
	m.requests++ // racekit:race id=hs-metrics-requests kind=race benign=false self racekit:race id=hs-metrics-requests-read kind=race benign=false
	if status >= 400 {
		m.errors++ // racekit:race id=hs-metrics-errors kind=race benign=false self flaky racekit:race id=hs-metrics-errors-read kind=race benign=false flaky
	}
	if c := status / 100; c >= 1 && c <= 5 {
		m.byClass[c]++ // racekit:race id=hs-metrics-class kind=race benign=false self racekit:race id=hs-metrics-class-read kind=race benign=false
	}
	m.latency += d     // racekit:race id=hs-metrics-latency kind=race benign=false self racekit:race id=hs-metrics-latency-read kind=race benign=false
	if d > m.slowest { // racekit:race id=hs-metrics-slowest kind=race benign=false flaky
		m.slowest = d // racekit:race id=hs-metrics-slowest kind=race benign=false self flaky
	}
	m.routesMu.Lock()
	m.routes[route]++
	m.routesMu.Unlock()
}

// Snapshot is the JSON form of the metrics.
type Snapshot struct {
	Requests   int            `json:"requests"`
	Errors     int            `json:"errors"`
	ByClass    map[string]int `json:"by_class"`
	MeanMicros int64          `json:"mean_us"`
	Routes     []RouteCount   `json:"routes"`
	UptimeMS   int64          `json:"uptime_ms"`
}

// RouteCount is one route's count.
type RouteCount struct {
	Route string `json:"route"`
	Count int    `json:"count"`
}

// snapshot reads the counters without synchronization, as they are
// written (the read side of the hs-metrics races).
func (m *Metrics) snapshot() Snapshot {
	s := Snapshot{
		Requests: m.requests, // racekit:race id=hs-metrics-requests-read kind=race benign=false
		ByClass:  map[string]int{},
		UptimeMS: time.Since(m.startedAt).Milliseconds(),
	}
	s.Errors = m.errors // racekit:race id=hs-metrics-errors-read kind=race benign=false flaky
	for c := 1; c <= 5; c++ {
		if n := m.byClass[c]; n > 0 { // racekit:race id=hs-metrics-class-read kind=race benign=false
			s.ByClass[string(rune('0'+c))+"xx"] = n
		}
	}
	if s.Requests > 0 {
		s.MeanMicros = m.latency.Microseconds() / int64(s.Requests) // racekit:race id=hs-metrics-latency-read kind=race benign=false
	}
	m.routesMu.Lock()
	for r, n := range m.routes {
		s.Routes = append(s.Routes, RouteCount{r, n})
	}
	m.routesMu.Unlock()
	sort.Slice(s.Routes, func(i, j int) bool { return s.Routes[i].Route < s.Routes[j].Route })
	return s
}

// RouteTotal is the locked per-route total: exact, unlike requests.
func (m *Metrics) RouteTotal() int {
	m.routesMu.Lock()
	defer m.routesMu.Unlock()
	n := 0
	for _, c := range m.routes {
		n += c
	}
	return n
}
