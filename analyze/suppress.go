package analyze

import (
	"hash/maphash"
	"strconv"
	"strings"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Suppress is go test -race's rule for which of the races a run shows it
// reports, as the ThreadSanitizer (v3) inside Go's runtime decides:
//
//   - ResetCells: reporting a race resets the shadow of the race's 8-byte
//     cell (DoReportRace: "this prevents trapping on this address in
//     future"), so the accesses made there until then are forgotten: a
//     later race whose previous access is one of them is not seen. A later
//     race with an access made after the report is: two races on one
//     variable in two tests are both reported, each test fails.
//   - EqualStacks: suppress_equal_stacks, on unless GORACE turns it off: a
//     race whose two stacks are an earlier report's is not reported.
//
// Go's runtime has no suppress_equal_addresses (its ThreadSanitizer dropped
// the flag): a GORACE that sets it changes nothing. A suppressed race is
// neither printed nor counted, so the test it happens in does not fail for
// it. It applies to observed races (the detectors go test -race's runtime
// stands for), not to predicted or potential ones.
type Suppress struct {
	ResetCells  bool
	EqualStacks bool
}

// GoRaceSuppress is Suppress as go test -race runs with GORACE set to
// gorace (the environment variable's value: space-separated name=value
// options; suppress_equal_stacks on by default).
func GoRaceSuppress(gorace string) Suppress {
	s := Suppress{ResetCells: true, EqualStacks: true}
	for _, opt := range strings.Fields(gorace) {
		name, val, ok := strings.Cut(opt, "=")
		if !ok || name != "suppress_equal_stacks" {
			continue
		}
		if on, ok := sanitizerBool(val); ok {
			s.EqualStacks = on
		}
	}
	return s
}

// sanitizerBool parses a boolean flag value as the sanitizers' flag parser
// does.
func sanitizerBool(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true, true
	case "0", "false", "no":
		return false, true
	}
	return false, false
}

// maxStackTries bounds how many occurrences of one site pair in one test
// have their stacks compared with the reported ones: a loop over a large
// array racing on every element would otherwise rebuild two stacks per
// element. Past it, the pair's further occurrences in that test are taken
// as suppressed (the ones compared were).
const maxStackTries = 16

// suppressor applies a Suppress rule to one detector's races, in the order
// the detector reports them (ThreadSanitizer's, by the run's order).
type suppressor struct {
	rule Suppress
	// reset: per 8-byte cell, the event of the last race reported there:
	// accesses up to it are forgotten.
	reset  map[uint64]uint64
	stacks map[[2]uint64]bool
	tries  map[pairTest]int
	seed   maphash.Seed
	n      int // occurrences suppressed
}

type pairTest struct {
	p    finding.Pair
	test string
}

func newSuppressor(rule Suppress) *suppressor {
	if !rule.ResetCells && !rule.EqualStacks {
		return nil
	}
	return &suppressor{rule: rule, reset: map[uint64]uint64{}, stacks: map[[2]uint64]bool{}, tries: map[pairTest]int{}, seed: maphash.MakeSeed()}
}

// applies reports whether the rule decides whether r is reported.
func (s *suppressor) applies(r *finding.Race) bool {
	return s != nil && r.Evidence == finding.Observed
}

// drop reports whether the occurrence r of pair p in test is suppressed,
// its stacks made by stacks when they are needed; an occurrence kept is
// remembered, for the later ones to be compared with.
func (s *suppressor) drop(r *finding.Race, p finding.Pair, test string, stacks func() (cur, prev []trace.Site)) bool {
	if s.rule.ResetCells {
		cell := r.Addr &^ 7
		if at, ok := s.reset[cell]; ok && r.Prev.Seq <= at {
			s.n++ // forgotten: ThreadSanitizer would not see this race
			return true
		}
		s.reset[cell] = r.Cur.Seq // seen, so reset, whether reported or not
	}
	var key [2]uint64
	if s.rule.EqualStacks {
		k := pairTest{p, test}
		if s.tries[k] >= maxStackTries {
			s.n++
			return true
		}
		s.tries[k]++
		cur, prev := stacks()
		key = [2]uint64{s.hash(cur, r.Cur.Site), s.hash(prev, r.Prev.Site)}
		if s.stacks[key] {
			s.n++
			return true
		}
	}
	if s.rule.EqualStacks {
		s.stacks[key] = true
	}
	return false
}

// hash is the identity of a stack: its frames' sites, or the access's
// site where the stack is unknown.
func (s *suppressor) hash(st []trace.Site, site trace.SiteID) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	if st == nil {
		h.WriteString("site ")
		h.WriteString(strconv.FormatUint(uint64(site), 10))
		return h.Sum64()
	}
	for _, f := range st {
		h.WriteString(f.File)
		h.WriteByte(0)
		h.WriteString(f.Func)
		h.WriteByte(0)
		h.WriteString(strconv.Itoa(f.Line))
		h.WriteByte(':')
		h.WriteString(strconv.Itoa(f.Col))
		h.WriteByte(0)
		h.WriteString(f.Callee.Func)
		h.WriteByte('\n')
	}
	return h.Sum64()
}
