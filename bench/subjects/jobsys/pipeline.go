package jobsys

import (
	"hash/fnv"
	"sort"
	"strings"
	"sync"
)

// record is a job's output on its way through the pipeline. Each stage
// owns the record between its receive and its send, and touches it
// without a lock: the channels order the stages (js-stage*).
type record struct {
	job    int
	raw    string
	tokens []string
	score  int
	tag    string
}

// Aggregator collects the sinks' output. The bug: the sinks append to it
// without a lock (js-agg), losing results. (Its backing array is allocated
// once, large enough for a run, so that the racing appends never
// reallocate: the race loses results but cannot tear the slice header
// into an out-of-bounds one.)
type Aggregator struct {
	results []int // appended by every sink without a lock
	tags    map[string]int
	tagsMu  sync.Mutex
}

func newAggregator(capacity int) *Aggregator {
	return &Aggregator{results: make([]int, 0, capacity), tags: map[string]int{}}
}

// add records one result.
func (a *Aggregator) add(r *record) {
	if len(a.results) < cap(a.results) { // racekit:race id=js-agg kind=race benign=false
		a.results = append(a.results, r.score) // racekit:race id=js-agg kind=race benign=false self
	}
	a.tagsMu.Lock()
	a.tags[r.tag]++
	a.tagsMu.Unlock()
}

// Results returns a sorted copy of the scores (after the pipeline drained).
func (a *Aggregator) Results() []int {
	out := append([]int(nil), a.results...)
	sort.Ints(out)
	return out
}

// Tags returns the per-tag counts (locked, exact).
func (a *Aggregator) Tags() map[string]int {
	a.tagsMu.Lock()
	defer a.tagsMu.Unlock()
	out := make(map[string]int, len(a.tags))
	for k, v := range a.tags {
		out[k] = v
	}
	return out
}

// Pipeline connects the stages.
type Pipeline struct {
	in     chan *record
	parsed chan *record
	scored chan *record
	agg    *Aggregator
	stages sync.WaitGroup
}

// newPipeline starts parse, score and sinks sink goroutines; the
// aggregator keeps up to capacity results.
func newPipeline(sinks, capacity int) *Pipeline {
	p := &Pipeline{
		in:     make(chan *record, 4),
		parsed: make(chan *record, 4),
		scored: make(chan *record, 4),
		agg:    newAggregator(capacity),
	}
	p.stages.Add(2 + sinks)
	go p.parse()
	go p.score()
	for i := 0; i < sinks; i++ {
		go p.sink()
	}
	return p
}

// submit hands a job's output to the pipeline; the record is built here
// and not touched again by the worker.
func (p *Pipeline) submit(job int, out string) {
	r := &record{job: job}
	r.raw = out // racekit:norace id=js-stage-raw why="the send on in orders the worker's write before parse's read"
	p.in <- r   // racekit:norace id=js-n-close why="every submit happens before the pool is drained and the pipeline closed"
}

// parse splits the raw output into tokens.
func (p *Pipeline) parse() {
	defer p.stages.Done()
	for r := range p.in {
		r.tokens = strings.Fields(r.raw) // racekit:norace id=js-stage-raw why="see submit" racekit:norace id=js-stage-tokens why="the send on parsed orders this write before score's read"
		p.parsed <- r
	}
	close(p.parsed)
}

// score hashes the tokens into a score and a tag.
func (p *Pipeline) score() {
	defer p.stages.Done()
	for r := range p.parsed {
		h := fnv.New32a()
		for _, t := range r.tokens { // racekit:norace id=js-stage-tokens why="see parse"
			h.Write([]byte(t))
		}
		r.score = int(h.Sum32() % 1000)
		r.tag = tagOf(len(r.tokens))
		p.scored <- r
	}
	close(p.scored)
}

func tagOf(n int) string {
	switch {
	case n == 0:
		return "empty"
	case n < 4:
		return "short"
	default:
		return "long"
	}
}

// sink feeds the aggregator.
func (p *Pipeline) sink() {
	defer p.stages.Done()
	for r := range p.scored {
		p.agg.add(r)
	}
}

// close drains the pipeline: no more submits may follow.
func (p *Pipeline) close() {
	close(p.in) // racekit:norace id=js-n-close why="see submit"
	p.stages.Wait()
}
