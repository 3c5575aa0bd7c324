package rt

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// The writer: rounds run in a goroutine of their own (writerLoop), every
// tick and when a goroutine fills a big chunk, and in a goroutine that
// filled a big chunk while the writer falls behind (helpWrite). A
// round computes the frontier, writes the definitions queued so far,
// merges the committed records of every goroutine by key up to the
// frontier, and encodes them into the file with fresh Seqs 1, 2, 3, ...
// Flush and Finish run a round themselves. Everything here is under wmu.

var (
	wmu       sync.Mutex
	w         *rkt.Writer
	out       *os.File
	outPath   string
	finished  bool          // the end block is written (or tracing failed)
	stopW     chan struct{} // closed when the trace is finished
	outSeq    uint64        // Seq of the last event written
	wsites    uint32        // sites defined in the file, counting site 0
	unflushed time.Time     // when the oldest event not yet flushed was written; zero if none

	wsnap   []*gstate // the registry, copied each round
	wheap   []*gstate // goroutines with records to write, by head key
	wev     trace.Event
	waddrs  []uint64
	wdefs   []def // the definitions being written (swapped with defs)
	wdefBuf []def
)

// wake asks the writer goroutine for a round.
var wake = make(chan struct{}, 1)

func wakeWriter() {
	select {
	case wake <- struct{}{}:
	default:
	}
}

const (
	// tick is the writer's period when no goroutine wakes it.
	tick = 10 * time.Millisecond
	// stealAfter is how long a goroutine may hold the frontier without
	// committing anything before the writer turns its word idle: it may
	// be blocked in code that is not traced.
	stealAfter = 10 * time.Millisecond
	// flushDelay bounds how long a written event may wait in the
	// pending block; with tick and stealAfter it bounds how long an
	// event takes to reach the file (a killed run leaves a readable
	// prefix).
	flushDelay = 50 * time.Millisecond
)

// Round modes.
const (
	roundNormal = iota
	roundForce  // Flush: steal every open goroutine, write all committed records
	roundFinal  // Finish: the same, and nothing is left behind
)

func writerLoop(stop chan struct{}) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-wake:
		case <-t.C:
		case <-stop:
			return
		}
		wmu.Lock()
		if finished {
			wmu.Unlock()
			return
		}
		round(roundNormal)
		wmu.Unlock()
	}
}

// round writes what can be written. The frontier F is a key below which
// (or at which, for plain events) no goroutine can add a record any more:
// the smallest bound of the goroutines that hold it (open words), and for
// an idle one the global seq loaded before its word (it will load a seq
// at least as large before it records again, see open). Every committed
// record with a key up to F is written, in key order; the others wait.
func round(mode int) {
	now := time.Now()
	lw := seq.Load()
	regMu.Lock()
	wsnap = append(wsnap[:0], reg...)
	regMu.Unlock()
	front := keyOf(lw, kindAccess)
	for _, g := range wsnap {
		dead := g.dead.Load() // before the word: a dead goroutine's word is final
		wd := g.word.Load()
		if !isIdle(wd) {
			steal := mode != roundNormal || (wd == g.wlast && now.Sub(g.wsince) >= stealAfter)
			for tries := 0; steal && !isIdle(wd); tries++ {
				if g.word.CompareAndSwap(wd, packWord(idleK, wd)) {
					wd = packWord(idleK, wd)
					break
				}
				wd = g.word.Load()
				if mode == roundForce && tries > 100 {
					break // it keeps committing; take it as it is
				}
			}
		}
		if wd != g.wlast {
			g.wlast, g.wsince = wd, now
		}
		if !isIdle(wd) && wordK(wd) < front {
			front = wordK(wd)
		}
		g.avail = (wd - g.consumed) & cntMask
		g.gone = dead
	}
	// Definitions after the words: a committed record's goroutine and
	// site were queued before it.
	writeDefs()
	if finished {
		return
	}
	if mode == roundFinal {
		front = ^uint64(0)
	}
	n := merge(front)
	if finished {
		return
	}
	for _, g := range wsnap {
		g.out.Store(g.consumed)
	}
	forgetDrained()
	if n > 0 && unflushed.IsZero() {
		unflushed = now
	}
	if !unflushed.IsZero() && (mode != roundNormal || now.Sub(unflushed) >= flushDelay) {
		unflushed = time.Time{}
		if err := w.Flush(); err != nil {
			fail(err)
		}
	}
}

// writeDefs writes the queued definitions.
func writeDefs() {
	defMu.Lock()
	wdefs, defs = defs, wdefBuf[:0]
	defMu.Unlock()
	for i := range wdefs {
		d := &wdefs[i]
		var err error
		if d.isSite {
			err = w.DefineSite(trace.SiteID(wsites), d.site)
			wsites++
		} else {
			err = w.DefineGoroutine(d.g)
		}
		if err != nil {
			fail(err)
			break
		}
	}
	clear(wdefs)
	wdefBuf = wdefs[:0]
}

// merge writes the committed records with keys up to front, in key
// order, and returns how many events it wrote. Each goroutine's records
// are in key order already; the heap picks the goroutine with the
// smallest head, which writes its run up to the next smallest head.
// Plain events at one key are placed in any order, all after the
// synchronization event of that seq.
func merge(front uint64) int {
	wheap = wheap[:0]
	for _, g := range wsnap {
		if g.headKey() && g.head <= front {
			wheap = append(wheap, g)
		}
	}
	for i := len(wheap)/2 - 1; i >= 0; i-- {
		siftDown(i)
	}
	written := 0
	for len(wheap) > 0 && !finished {
		g := wheap[0]
		limit := front
		if len(wheap) > 1 {
			limit = min(limit, wheap[1].head)
		}
		if len(wheap) > 2 {
			limit = min(limit, wheap[2].head)
		}
		written += g.writeRun(limit)
		if g.headKey() && g.head <= front {
			siftDown(0)
		} else {
			last := len(wheap) - 1
			wheap[0] = wheap[last]
			wheap = wheap[:last]
			siftDown(0)
		}
	}
	return written
}

func siftDown(i int) {
	n := len(wheap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && wheap[r].head < wheap[l].head {
			m = r
		}
		if wheap[i].head <= wheap[m].head {
			return
		}
		wheap[i], wheap[m] = wheap[m], wheap[i]
		i = m
	}
}

// peek returns g's next committed record (g.avail > 0), freeing the
// chunks it has read.
func (g *gstate) peek() *rec {
	for {
		c := g.rc
		if g.ri < len(c.recs) {
			if nx := c.next.Load(); nx == nil || g.ri < c.n {
				return &c.recs[g.ri]
			}
		}
		nx := c.next.Load()
		freeChunk(c)
		g.rc, g.ri = nx, 0
	}
}

// take consumes g's next committed record.
func (g *gstate) take() *rec {
	r := g.peek()
	g.ri++
	g.avail--
	g.consumed++
	return r
}

// headKey reads g's key markers up to its next committed event, sets
// g.head to that event's key and reports whether there is one.
func (g *gstate) headKey() bool {
	for g.avail > 0 {
		r := g.peek()
		if r.op == opKey {
			g.kcur = r.obj
			g.take()
			continue
		}
		g.head = eventKey(g.kcur, r.op)
		return true
	}
	return false
}

// eventKey is the key of an event of op after key marker k.
func eventKey(k uint64, op trace.Op) uint64 {
	if keyedAtLoad(op) {
		return k
	}
	return k &^ 3 // kindSync
}

// writeRun writes g's events while their keys are at most limit (at
// least one), and returns how many it took (written, or dropped by TREE);
// g.head is then the key of the next one, if any.
func (g *gstate) writeRun(limit uint64) int {
	n := 0
	e := &wev
	for g.avail > 0 {
		// The committed records of this chunk, read in place.
		g.peek()
		c := g.rc
		end := len(c.recs)
		if c.next.Load() != nil {
			end = c.n
		}
		if uint64(end-g.ri) > g.avail {
			end = g.ri + int(g.avail)
		}
		more := g.avail > uint64(end-g.ri) // committed records go on in the next chunk
		e.G = g.gid
		e.Addrs = nil
		i := g.ri
		for ; i < end; i++ {
			r := &c.recs[i]
			if r.op == opKey {
				g.kcur = r.obj
				continue
			}
			if k := eventKey(g.kcur, r.op); k > limit && n > 0 {
				break
			}
			if r.op == trace.OpMethodBegin || (i+1 < end && isTrailer(c.recs[i+1].op)) || (i+1 == end && more) {
				break // an event with records after it: writeEvent
			}
			e.Op, e.Flags, e.Obj, e.Value = r.op, r.flags, r.obj, 0
			e.Site = trace.SiteID(r.site)
			if r.site >= wsites {
				e.Site = 0 // a site table not registered (see RegisterFile)
			}
			writeOut(e) // takes the Seq; TREE may drop it (filter.go)
			n++
		}
		g.avail -= uint64(i - g.ri)
		g.consumed += uint64(i - g.ri)
		g.ri = i
		if !g.headKey() {
			break
		}
		if g.head > limit && n > 0 {
			break
		}
		if i == end {
			continue // the next chunk
		}
		writeEvent(g)
		n++
	}
	return n
}

// writeEvent writes g's next event, with the value or addresses in the
// records after it.
func writeEvent(g *gstate) {
	r := g.take()
	e := &wev
	e.G, e.Op, e.Flags, e.Obj, e.Value, e.Addrs = g.gid, r.op, r.flags, r.obj, 0, nil
	e.Site = trace.SiteID(r.site)
	if r.site >= wsites {
		e.Site = 0
	}
	waddrs = waddrs[:0]
	for g.avail > 0 {
		x := g.peek()
		if x.op == opVal {
			e.Value = x.obj
		} else if x.op == opAddr {
			waddrs = append(waddrs, x.obj)
		} else {
			break
		}
		g.take()
	}
	if e.Op == trace.OpMethodBegin {
		e.Addrs = waddrs
	}
	writeOut(e)
}

// forgetDrained drops the goroutines that ended and whose records are all
// written, with their chunks, from the registry; and frees the chunks the
// others have moved past.
func forgetDrained() {
	drop := 0
	for _, g := range wsnap {
		if g.avail > 0 {
			continue
		}
		if g.gone {
			for c := g.rc; c != nil; {
				nx := c.next.Load()
				freeChunk(c)
				c = nx
			}
			g.rc = nil
			drop++
			continue
		}
		// Free a chunk read to its end that the goroutine has left.
		if c := g.rc; g.ri == len(c.recs) && c.next.Load() != nil {
			g.peek() // not called with avail 0 past the end: it moves to next
		}
	}
	if drop == 0 {
		return
	}
	regMu.Lock()
	j := 0
	for _, g := range reg {
		if g.rc != nil {
			reg[j] = g
			j++
		}
	}
	clear(reg[j:])
	reg = reg[:j]
	regMu.Unlock()
}

// fail stops tracing after an I/O or encoding error. Called with wmu held.
func fail(err error) {
	if finished {
		return
	}
	finished = true
	live.Store(false)
	close(stopW)
	fmt.Fprintf(os.Stderr, "racekit: tracing stopped: %v\n", err)
}
