package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/trace"
)

// Leaks writes the goroutines a run left blocked on channel, lock,
// WaitGroup or Cond operations
// (detect/leak), each like a goroutine of Go's race report: the blocked
// operation with its stack, then where the goroutine was created.
func Leaks(w io.Writer, m *trace.Meta, leaks []leak.Leak, created map[trace.GID][]trace.Site) error {
	bw := &errWriter{w: w}
	for _, l := range leaks {
		bw.printf("==================\n")
		bw.printf("WARNING: GOROUTINE LEAK (blocked in %s when the run ended)\n", l.Kind())
		writeBlocked(bw, m, l)
		bw.printf("\n")
		writeCreation(bw, m, l.G, created[l.G])
		bw.printf("==================\n")
	}
	return bw.err
}

// Stall writes the deadlock of a run whose goroutines all blocked on each
// other (rt.FinishStalled) while tests ran: each blocked goroutine, what
// it waits for and the locks it holds, then where each was created.
func Stall(w io.Writer, m *trace.Meta, tests []string, blocked []leak.Leak, created map[trace.GID][]trace.Site) error {
	bw := &errWriter{w: w}
	bw.printf("==================\n")
	in := ""
	if len(tests) > 0 {
		in = " in " + strings.Join(tests, ", ")
	}
	bw.printf("WARNING: DEADLOCK%s (every goroutine is blocked, and no timer can wake one: seen at once, not at the -timeout alarm)\n", in)
	for i, l := range blocked {
		if i > 0 {
			bw.printf("\n")
		}
		writeBlocked(bw, m, l)
	}
	for _, l := range blocked {
		bw.printf("\n")
		writeCreation(bw, m, l.G, created[l.G])
	}
	bw.printf("==================\n")
	return bw.err
}

// writeBlocked writes what goroutine l.G is blocked in (a select's cases
// one by one) and the locks it holds.
func writeBlocked(bw *errWriter, m *trace.Meta, l leak.Leak) {
	for i, op := range l.Ops {
		if op.Block == trace.BlockNilSend || op.Block == trace.BlockNilRecv {
			bw.printf("Goroutine %s blocked in %s:\n", m.Goroutine(l.G).Label(), op.Block)
			writeStack(bw, m, op.Site, op.Stack)
			continue
		}
		if op.Block != 0 {
			bw.printf("Goroutine %s blocked in %s of %s:\n", m.Goroutine(l.G).Label(), op.Block, objName(m, op))
			writeStack(bw, m, op.Site, op.Stack)
			continue
		}
		verb := "receive from"
		if op.Send {
			verb = "send on"
		}
		if i > 0 {
			bw.printf("or ")
		}
		bw.printf("Goroutine %s blocked to %s %s (event %d):\n", m.Goroutine(l.G).Label(), verb, chanName(m, op), op.Seq)
		writeStack(bw, m, op.Site, op.Stack)
	}
	writeHeld(bw, m, l.Held)
}

// chanName names op's channel: by its name if the trace gives one, else
// by where it was made.
func chanName(m *trace.Meta, op leak.Op) string {
	if n := m.NameOf(op.Chan); n != "" {
		return n
	}
	if op.Made != 0 {
		s := m.Site(op.Made)
		return fmt.Sprintf("the channel made at %s:%d (0x%x)", s.File, s.Line, op.Chan)
	}
	return fmt.Sprintf("channel 0x%x", op.Chan)
}

// objName names a blocked lock, WaitGroup or Cond: by its name if the
// trace gives one, else by what it is and its address (as lockName:
// "lock 0x...") and where it was allocated.
func objName(m *trace.Meta, op leak.Op) string {
	if n := m.NameOf(op.Chan); n != "" {
		return n
	}
	noun := "lock"
	switch op.Block {
	case trace.BlockWait:
		noun = "WaitGroup"
	case trace.BlockCondWait:
		noun = "Cond"
	}
	if op.Made != 0 {
		s := m.Site(op.Made)
		return fmt.Sprintf("%s 0x%x (allocated at %s:%d)", noun, op.Chan, s.File, s.Line)
	}
	return fmt.Sprintf("%s 0x%x", noun, op.Chan)
}

// JSONLeak is one leaked goroutine in racekit's JSON output.
type JSONLeak struct {
	Kind      string     `json:"kind"` // "chan send", "chan receive", "select", or the sync operation ("sync.Mutex.Lock", ...)
	Goroutine string     `json:"goroutine"`
	Ops       []JSONOp   `json:"ops"`
	Created   []JSONSite `json:"created,omitempty"`
}

// JSONOp is one blocked channel operation.
type JSONOp struct {
	Send  bool       `json:"send"`
	Chan  string     `json:"chan"`
	Event uint64     `json:"event"`
	Stack []JSONSite `json:"stack"`
}

// LeaksJSON writes leaks as a JSON array.
func LeaksJSON(w io.Writer, m *trace.Meta, leaks []leak.Leak, created map[trace.GID][]trace.Site) error {
	out := []JSONLeak{}
	for _, l := range leaks {
		j := JSONLeak{Kind: l.Kind(), Goroutine: m.Goroutine(l.G).Label()}
		for _, op := range l.Ops {
			stack := op.Stack
			if len(stack) == 0 {
				stack = []trace.Site{m.Site(op.Site)}
			}
			j.Ops = append(j.Ops, JSONOp{Send: op.Send, Chan: chanName(m, op), Event: op.Seq, Stack: jsonSites(stack)})
		}
		j.Created = jsonSites(created[l.G])
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
