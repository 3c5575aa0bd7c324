package analyze

import (
	"hash/maphash"
	"strconv"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gorace"
	"github.com/racekit/racekit/trace"
)

// Suppress is go test -race's rule for which of the races a run shows it
// reports, as the ThreadSanitizer (v3) inside Go's runtime decides:
//
//   - ResetCells: reporting a race resets the shadow of the race's 8-byte
//     cell (DoReportRace: "this prevents trapping on this address in
//     future"): the accesses made there until then are forgotten, so a
//     later race whose previous access is one of them is not seen, and a
//     read-only marker is left there, which makes a later range access of
//     the cell skip the check (MemoryAccessRange: go test -race checks an
//     access of a struct or an array of several parts as a range,
//     trace.Site.Wide). A race between later word accesses is seen: two
//     races on one variable in two tests are both reported. The marker
//     lasts until the memory is allocated again.
//   - EqualStacks: suppress_equal_stacks, on unless GORACE turns it off: a
//     race whose two stacks are an earlier report's is not reported.
//
// Go's runtime has no suppress_equal_addresses (its race runtime does not
// list the flag): a GORACE that sets it changes nothing. A race left out is
// neither printed nor counted, so the test it happens in does not fail for
// it. It applies to observed races (the detectors go test -race's runtime
// stands for), not to predicted or potential ones.
type Suppress struct {
	ResetCells  bool
	EqualStacks bool
}

// GoRaceSuppress is Suppress as go test -race runs with GORACE set to
// env (the environment variable's value, read by package gorace as the
// race runtime reads it; suppress_equal_stacks on by default).
func GoRaceSuppress(env string) Suppress {
	return Suppress{ResetCells: true, EqualStacks: gorace.Bool(gorace.Options(env), "suppress_equal_stacks", true)}
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
	meta *trace.Meta
	// reset: per 8-byte cell, the event of the last race seen there:
	// accesses up to it are forgotten, and a wide one is not checked.
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

func newSuppressor(rule Suppress, meta *trace.Meta) *suppressor {
	if !rule.ResetCells && !rule.EqualStacks {
		return nil
	}
	return &suppressor{rule: rule, meta: meta, reset: map[uint64]uint64{}, stacks: map[[2]uint64]bool{}, tries: map[pairTest]int{}, seed: maphash.MakeSeed()}
}

// applies reports whether the rule decides whether r is reported.
func (s *suppressor) applies(r *finding.Race) bool {
	return s != nil && r.Evidence == finding.Observed
}

// seen reports whether go test -race's runtime would see the race r at
// all (ResetCells), every occurrence in turn: one it sees resets the cell.
func (s *suppressor) seen(r *finding.Race) bool {
	if !s.rule.ResetCells {
		return true
	}
	cell := r.Addr &^ 7
	if at, ok := s.reset[cell]; ok && (r.Prev.Seq <= at || s.wide(r.Cur.Site) || s.wide(r.Prev.Site)) {
		// The previous access forgotten, or a range access of the
		// marked cell not checked (the current one) or not kept (the
		// previous one, made after the mark). The range's own first
		// cell is what the runtime checks; the race's word stands for
		// it.
		s.n++
		return false
	}
	s.reset[cell] = r.Cur.Seq
	return true
}

func (s *suppressor) wide(site trace.SiteID) bool {
	return int(site) < len(s.meta.Sites) && s.meta.Sites[site].Wide
}

// allocated forgets the cells of [lo, hi), memory allocated again: the
// runtime resets its shadow.
func (s *suppressor) allocated(lo, hi uint64) {
	if len(s.reset) == 0 {
		return
	}
	if (hi-lo)/8 > uint64(len(s.reset)) {
		for c := range s.reset {
			if c+8 > lo && c < hi {
				delete(s.reset, c)
			}
		}
		return
	}
	for c, n := lo&^7, (hi-lo&^7+7)/8; n > 0; c, n = c+8, n-1 {
		delete(s.reset, c) // counted, not compared: hi may be 2^64-1
	}
}

// drop reports whether the occurrence r of pair p in test, one that would
// be reported and that the runtime sees, is suppressed by its stacks (made
// by stacks when they are needed); an occurrence kept is remembered, for
// the later ones to be compared with.
func (s *suppressor) drop(r *finding.Race, p finding.Pair, test string, stacks func() (cur, prev []trace.Site)) bool {
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
