package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/report/sarif"
	"github.com/racekit/racekit/trace"
)

// The rules of blocking bugs in SARIF, beside SARIFRule's races.
const (
	SARIFLeakRule     = "goroutine-leak"
	SARIFDeadlockRule = "deadlock"
)

// DynamicBlock is a blocking bug of a run, for SARIF as DynamicRace is a
// race: goroutines the run left blocked (a leak), a deadlock the run
// stalled in, or a deadlock another interleaving of it reaches (a
// lock-order cycle, a lock held across a channel operation, Go's
// read-write-read), with each goroutine's blocked operation or request
// and its stack.
type DynamicBlock struct {
	Rule    string // SARIFLeakRule or SARIFDeadlockRule
	Verdict string // "observed" (the run had it) or "predicted"
	Text    string // what happened, one sentence
	Package string
	// Ops is each goroutine's operation: Kind what it waits in or
	// requests ("chan send", "sync.Mutex.Lock"), Site, Stack, Goroutine.
	Ops []RaceAccess
}

// NewLeakBlock is leak l of the trace m describes.
func NewLeakBlock(m *trace.Meta, l leak.Leak) DynamicBlock {
	return DynamicBlock{
		Rule: SARIFLeakRule, Verdict: "observed",
		Text: fmt.Sprintf("Goroutine leak: %s blocked in %s when the run ended.", m.Goroutine(l.G).Label(), l.Kind()),
		Ops:  []RaceAccess{blockedOp(m, l)},
	}
}

// NewStallBlock is the deadlock of a run whose goroutines all blocked on
// each other while tests ran.
func NewStallBlock(m *trace.Meta, blocked []leak.Leak, tests []string) DynamicBlock {
	b := DynamicBlock{Rule: SARIFDeadlockRule, Verdict: "observed"}
	var gs []string
	for _, l := range blocked {
		b.Ops = append(b.Ops, blockedOp(m, l))
		gs = append(gs, m.Goroutine(l.G).Label())
	}
	in := ""
	if len(tests) > 0 {
		in = " in " + strings.Join(tests, ", ")
	}
	b.Text = fmt.Sprintf("Deadlock%s: every goroutine blocked (%s), and no timer can wake one.", in, strings.Join(gs, ", "))
	return b
}

// NewCycleBlock is a deadlock detect/deadlock predicts: each goroutine's
// request, while it holds the lock the previous one requests.
func NewCycleBlock(m *trace.Meta, cy deadlock.Cycle) DynamicBlock {
	b := DynamicBlock{Rule: SARIFDeadlockRule, Verdict: "predicted"}
	var gs []string
	for _, d := range cy.Deps {
		kind := "sync.Mutex.Lock"
		switch {
		case d.Chan && d.Send:
			kind = "chan send"
		case d.Chan:
			kind = "chan receive"
		case d.Read:
			kind = "sync.RWMutex.RLock"
		}
		g := m.Goroutine(d.G).Label()
		b.Ops = append(b.Ops, RaceAccess{Kind: kind, Goroutine: g, Site: m.Site(d.Site), Stack: slices.Clone(d.Stack)})
		gs = append(gs, g)
	}
	what := map[deadlock.CycleKind]string{
		deadlock.LockOrder:     "a lock-order cycle",
		deadlock.RecursiveRead: "a read lock taken again while a writer waits (read-write-read)",
		deadlock.LockChannel:   "a lock held across a channel operation",
	}[cy.Kind]
	b.Text = fmt.Sprintf("Potential deadlock: %s between %s; another interleaving of the run blocks them all.", what, strings.Join(gs, ", "))
	return b
}

// blockedOp is the operation leak l's goroutine is blocked in (a select's
// first case).
func blockedOp(m *trace.Meta, l leak.Leak) RaceAccess {
	op := l.Ops[0]
	return RaceAccess{Kind: l.Kind(), Goroutine: m.Goroutine(l.G).Label(), Site: m.Site(op.Site), Stack: slices.Clone(op.Stack)}
}

// blockRules are the rules of SARIF's blocking results, after SARIFRule.
var blockRules = []sarif.Rule{{
	ID:               SARIFLeakRule,
	Name:             "GoroutineLeak",
	ShortDescription: sarif.Message{Text: "goroutine leak"},
	FullDescription: &sarif.Message{Text: "A goroutine was still blocked in a channel operation, a Lock, a WaitGroup.Wait or a Cond.Wait " +
		"when the run ended: nothing will ever wake it (what go.uber.org/goleak reports, with the blocked operation)."},
	DefaultConfiguration: &sarif.Configuration{Level: "warning"},
}, {
	ID:               SARIFDeadlockRule,
	Name:             "Deadlock",
	ShortDescription: sarif.Message{Text: "deadlock"},
	FullDescription: &sarif.Message{Text: "Goroutines that wait for each other forever: observed (the run stalled with every goroutine " +
		"blocked) or predicted (a lock-order cycle, a lock held across a channel operation, or a read lock taken again while a " +
		"writer waits, which another interleaving of the run reaches)."},
	DefaultConfiguration: &sarif.Configuration{Level: "error"},
}}

// blockResult is b as a SARIF result of rule index ruleIndex: at its first
// goroutine's operation, the others related locations, each goroutine's
// stack a thread flow.
func (u sarifURIs) blockResult(b *DynamicBlock, ruleIndex int) sarif.Result {
	level := "error"
	if b.Rule == SARIFLeakRule {
		level = "warning"
	}
	props := map[string]any{"verdict": b.Verdict}
	if b.Package != "" {
		props["package"] = b.Package
	}
	r := sarif.Result{RuleID: b.Rule, RuleIndex: ruleIndex, Level: level, Message: sarif.Message{Text: escapeLinkText(b.Text)}, Properties: props}
	flow := sarif.CodeFlow{Message: &sarif.Message{Text: "each goroutine's stack at its blocked operation"}}
	for i, op := range b.Ops {
		msg := op.Kind + byGoroutine(op)
		if i == 0 {
			r.Locations = []sarif.Location{u.location(op.Site, msg)}
		} else {
			loc := u.location(op.Site, msg)
			loc.ID = i
			r.RelatedLocations = append(r.RelatedLocations, loc)
		}
		flow.ThreadFlows = append(flow.ThreadFlows, u.threadFlow(op, msg))
	}
	r.CodeFlows = []sarif.CodeFlow{flow}
	return r
}
