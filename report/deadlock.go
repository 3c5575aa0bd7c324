package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/trace"
)

// Deadlocks writes each lock-order cycle as a block in the style of Go's
// race report: per goroutine of the cycle, the lock it requests (with the
// request's stack) and the locks it holds (each with where it was taken),
// then where each goroutine was created.
func Deadlocks(w io.Writer, m *trace.Meta, cycles []deadlock.Cycle, created map[trace.GID][]trace.Site) error {
	bw := &errWriter{w: w}
	for _, c := range cycles {
		bw.printf("==================\n")
		if c.Kind == deadlock.RecursiveRead {
			writeRecursiveRead(bw, m, c)
		} else if c.Kind == deadlock.LockChannel {
			writeLockChannel(bw, m, c)
		} else {
			bw.printf("WARNING: POTENTIAL DEADLOCK (lock-order cycle of %d goroutines, predicted by iGoodlock)\n", len(c.Deps))
		}
		for i, d := range c.Deps {
			if c.Kind != deadlock.LockOrder {
				break
			}
			next := c.Deps[(i+1)%len(c.Deps)]
			mode := ""
			if d.Read {
				mode = " (read mode)"
			}
			bw.printf("Goroutine %s requests %s%s, held by goroutine %s (event %d):\n", m.Goroutine(d.G).Label(), lockName(m, d.Lock), mode, m.Goroutine(next.G).Label(), d.Seq)
			writeStack(bw, m, d.Site, d.Stack)
			writeHeld(bw, m, d.Held)
			bw.printf("\n")
		}
		for i, d := range c.Deps {
			if i > 0 {
				bw.printf("\n")
			}
			writeCreation(bw, m, d.G, created[d.G])
		}
		bw.printf("==================\n")
	}
	return bw.err
}

// writeHeld writes the locks a goroutine holds, each with where it took it.
func writeHeld(bw *errWriter, m *trace.Meta, held []deadlock.Held) {
	for _, h := range held {
		mode := ""
		if h.Read {
			mode = " (read mode)"
		}
		bw.printf("  holding %s%s, taken at (event %d):\n", lockName(m, h.Lock), mode, h.Seq)
		writeStack(bw, m, h.Site, h.Stack)
	}
}

// writeLockChannel writes the body of a lock held across a channel
// operation: the waiter's operation and the lock it holds, then the other
// goroutine's request of that lock and its operation after it.
func writeLockChannel(bw *errWriter, m *trace.Meta, c deadlock.Cycle) {
	w, r := c.Deps[0], c.Deps[1]
	verb, other := "receive from", "send"
	if w.Send {
		verb, other = "send on", "receive"
	}
	bw.printf("WARNING: POTENTIAL DEADLOCK (a lock held across a channel operation; predicted)\n")
	bw.printf("Goroutine %s waits to %s channel 0x%x (event %d):\n", m.Goroutine(w.G).Label(), verb, w.Lock, w.Seq)
	writeStack(bw, m, w.Site, w.Stack)
	for _, h := range w.Held {
		if h.Lock == r.Lock {
			bw.printf("  holding %s, taken at (event %d):\n", lockName(m, h.Lock), h.Seq)
			writeStack(bw, m, h.Site, h.Stack)
		}
	}
	bw.printf("\nGoroutine %s requests %s, unordered with that operation (event %d):\n", m.Goroutine(r.G).Label(), lockName(m, r.Lock), r.Seq)
	writeStack(bw, m, r.Site, r.Stack)
	bw.printf("  before its %s, which the operation above waits for, at:\n", other)
	writeStack(bw, m, r.Then, nil)
	bw.printf("If the first goroutine takes the lock first, each waits for the other.\n\n")
}

// writeRecursiveRead writes the body of an RWMutex read-write-read: the
// reader's second RLock and its first, the writer's Lock.
func writeRecursiveRead(bw *errWriter, m *trace.Meta, c deadlock.Cycle) {
	r, w := c.Deps[0], c.Deps[1]
	bw.printf("WARNING: POTENTIAL DEADLOCK (RWMutex read-write-read: a Lock between two RLocks of one goroutine; predicted)\n")
	bw.printf("Goroutine %s read-locks %s again (event %d):\n", m.Goroutine(r.G).Label(), lockName(m, r.Lock), r.Seq)
	writeStack(bw, m, r.Site, r.Stack)
	for _, h := range r.Held {
		if h.Lock == r.Lock {
			bw.printf("  holding it in read mode, taken at (event %d):\n", h.Seq)
			writeStack(bw, m, h.Site, h.Stack)
		}
	}
	bw.printf("\nGoroutine %s write-locks %s, unordered with that second RLock (event %d):\n", m.Goroutine(w.G).Label(), lockName(m, w.Lock), w.Seq)
	writeStack(bw, m, w.Site, w.Stack)
	bw.printf("A Lock that comes between the two RLocks waits for the first, and the second waits for the Lock.\n\n")
}

func writeStack(bw *errWriter, m *trace.Meta, site trace.SiteID, stack []trace.Site) {
	if len(stack) == 0 {
		stack = []trace.Site{m.Site(site)}
	}
	for _, s := range stack {
		writeFrame(bw, s)
	}
}

func lockName(m *trace.Meta, lock uint64) string {
	if n := m.NameOf(lock); n != "" {
		return n
	}
	return fmt.Sprintf("lock 0x%x", lock)
}

// JSONDeadlock is one cycle in racekit's JSON output.
type JSONDeadlock struct {
	Kind       string          `json:"kind"`     // "lock-order-cycle", "recursive-read-lock" or "lock-channel"
	Evidence   string          `json:"evidence"` // "potential"
	Goroutines []JSONDepWaiter `json:"goroutines"`
}

// JSONDepWaiter is one goroutine of a cycle: what it requests, what it holds.
type JSONDepWaiter struct {
	Goroutine string         `json:"goroutine"`
	Requests  JSONLockSite   `json:"requests"`
	Holds     []JSONLockSite `json:"holds"`
}

// JSONLockSite is a lock at an acquire.
type JSONLockSite struct {
	Lock  string     `json:"lock"`
	Read  bool       `json:"read,omitempty"`
	Event uint64     `json:"event"`
	Stack []JSONSite `json:"stack"`
}

// DeadlocksJSON writes the cycles as {"deadlocks": [...]}.
func DeadlocksJSON(w io.Writer, m *trace.Meta, cycles []deadlock.Cycle) error {
	out := struct {
		Deadlocks []JSONDeadlock `json:"deadlocks"`
	}{Deadlocks: []JSONDeadlock{}}
	lockSite := func(lock uint64, read bool, seq uint64, site trace.SiteID, stack []trace.Site) JSONLockSite {
		if len(stack) == 0 {
			stack = []trace.Site{m.Site(site)}
		}
		return JSONLockSite{Lock: lockName(m, lock), Read: read, Event: seq, Stack: jsonSites(stack)}
	}
	for _, c := range cycles {
		jd := JSONDeadlock{Kind: "lock-order-cycle", Evidence: "potential"}
		switch c.Kind {
		case deadlock.RecursiveRead:
			jd.Kind = "recursive-read-lock" // goroutines[0] read-locks again; goroutines[1] write-locks
		case deadlock.LockChannel:
			jd.Kind = "lock-channel" // goroutines[0] holds the lock and waits on the channel ("requests" names it); goroutines[1] requests the lock
		}
		for _, d := range c.Deps {
			jw := JSONDepWaiter{Goroutine: m.Goroutine(d.G).Label(), Requests: lockSite(d.Lock, d.Read, d.Seq, d.Site, d.Stack)}
			if d.Chan {
				jw.Requests.Lock = fmt.Sprintf("channel 0x%x", d.Lock)
			}
			for _, h := range d.Held {
				jw.Holds = append(jw.Holds, lockSite(h.Lock, h.Read, h.Seq, h.Site, h.Stack))
			}
			jd.Goroutines = append(jd.Goroutines, jw)
		}
		out.Deadlocks = append(out.Deadlocks, jd)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
