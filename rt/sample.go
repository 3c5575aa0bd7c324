package rt

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/trace"
)

// Sampling while recording: LiteRace's dispatch check (Marino et al.,
// PLDI'09, §3.3 and §4.1), configured by the environment:
//
//	RACEKIT_SAMPLE=NAME       a sampler of package filter/sample (tl-ad, ...)
//	RACEKIT_SEED=N            the random samplers' seed (default 1)
//	RACEKIT_SAMPLE_MODE=sync  run the check, record synchronization, but no
//	                          access at all (Table 5's "+sync" configuration)
//	RACEKIT_SAMPLE_MODE=dispatch
//	                          run only the check at function entry and exit;
//	                          nothing is traced (Table 5's "dispatch check")
//
// Enter, at every instrumented function's entry (not the quiet ones:
// instrument/quiet.go), decides with the goroutine's dispatch state (the
// offline sample.Filter's Counters, Schedule and Rand streams, so the same
// decisions for the same per-goroutine calls) whether the invocation is
// sampled, and returns the decision, which the function passes to each of
// its access hooks: unsampled, a hook is one inlined branch (accessHook).
// That is one guarded body where LiteRace has two copies of each
// function; leaf functions (accesses only, no call that records) do get
// both, chosen by Sampled before any frame exists (instrument's
// leafCopy), and so do loop bodies (loop.go). Hooks outside every function
// body, and accesses outside every traced frame (the start routine's,
// checked once as sample.RootFunc), look the decision up instead.
//
// Synchronization, goroutine life and allocations are always recorded
// (§3.2: a missed synchronization would invent races), with two savings:
// edges on global objects that add none (sync.go's edge), and a lock's
// acquisition recorded at the goroutine's next event (acquireLock).
// BarrierPairs are not recorded (barriersOn): they are RDIT's, and a
// sampled trace is refused to the predictive detectors. An unsampled frame
// is recorded (FuncEnter, FuncExit) only when something other than a lock
// operation or a sync edge (sample.Frameless) is recorded inside it, so
// that event has its stack (Enter keeps the frame pending; showFrames):
// LiteRace's unsampled code logs only synchronization too.
//
// Sampled, Enter and Leave have fast paths for tl-ad and tp-ad
// (quickCheck: the goroutine's gstate from gtab, its function's Counter
// among the first places of its table, stepped inline in the middle of a
// run); anything else takes sampledSlow, enterSlow, leaveSlow.
// TestSampledLeafCopies holds Sampled's decisions to Enter's,
// TestAccessGivenTrueAsksFrame Enter's frame bits. What the check costs
// (BenchmarkUnsampledCall, BenchmarkEnter) is in
// bench/results/overhead/README.md.
//
// Dedup (dedup.go) sees only the accesses of sampled frames, so a sampled
// run records exactly what the offline filter keeps from a full run
// recorded without dedup (TestSampledEqualsOffline, RACEKIT_DEDUP=0), and
// with dedup the same words per epoch (sample.Epochs). The data access
// recorded with each atomic operation (atomicRecord) is part of its
// synchronization record and always kept.
//
// Where the samplers keep their state:
//   - tl-ad, tl-fx, ucp, rnd10, rnd25 (a stream per goroutine): in the
//     goroutine's gstate, with no lock.
//   - g-ad, g-fx: a Counter per function shared by all goroutines, updated
//     by compare-and-swap; decisions depend on how calls interleave, as in
//     LiteRace.
//   - gs-ad (racekit's; see filter/sample): a Counter per (go statement,
//     function), a siteRegion found once per goroutine (under a mutex) and
//     held in its sampleState; the go statement is its Fork's site, which
//     Begin passes to born. A goroutine born in untraced code keeps its own
//     counters, as under tl-ad.
//   - tp-ad (racekit's): counters in slots; a goroutine takes the slot its
//     pool freed last (its go statement's; the roots' for one born in
//     untraced code) at its first check, under slotMu, and gives it back at
//     End (a root: at Leave to depth 0, and after the check of an unsampled
//     copy called from untraced code). A slot is its holder's alone, so the
//     check is tl-ad's; decisions depend on which goroutines of a pool are
//     alive at once.

var (
	// sampling is true when a sampler is on: Enter runs the dispatch
	// check, and an access given true asks its frame's bit (sampleSkip).
	sampling bool
	// sampleNoAccess drops every access (RACEKIT_SAMPLE_MODE=sync).
	sampleNoAccess bool
	// quickCheck: the dispatch check may take its fast paths (Sampled,
	// enter, Leave, and dispatch-only mode's): a sampler whose counters a
	// goroutine owns (tl-ad's and tp-ad's scopes), accesses recorded.
	quickCheck bool
	// dispatchOnly runs the check and traces nothing
	// (RACEKIT_SAMPLE_MODE=dispatch).
	dispatchOnly bool

	samplePol    sample.Policy
	sampleSeed   int64
	sampleThresh uint64 // PerCall: sample.Threshold(samplePol.Prob)
)

// sampleState is one goroutine's dispatch state.
type sampleState struct {
	rootDone bool // the start routine's check is made; rootRec its result
	rootRec  bool
	seeded   bool     // rng is seeded (PerCall)
	bits     []uint64 // bit d: the frame at depth d+1 is sampled
	root     sample.Counter
	rng      sample.Rand
	ctab     counterTable // PerGoroutine: a Counter per function
	// PerSite: the counters of the goroutine's go statement, once looked
	// up; the site of its Fork when it was forked (born).
	reg      *siteRegion
	forkSite uint32
	forked   bool
	// PerSlot: the slot of its pool the goroutine counts with, nil when it
	// holds none.
	slot *slotCounters
}

// born records that the goroutine was started by the go statement at site
// (Begin calls it, before the goroutine's first check).
func (s *sampleState) born(site uint32) { s.forkSite, s.forked = site, true }

// configureSampling reads the sampling environment. It reports an unknown
// sampler or mode on stderr and records everything then (a trace with too
// much is safe; the front end checks the names before it runs anything).
func configureSampling() {
	name := os.Getenv("RACEKIT_SAMPLE")
	if name == "" {
		return
	}
	seed := int64(1)
	if s := os.Getenv("RACEKIT_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SEED=%q is not an integer; sampling with seed 1\n", s)
		} else {
			seed = n
		}
	}
	if err := setSampler(name, seed, os.Getenv("RACEKIT_SAMPLE_MODE")); err != nil {
		fmt.Fprintf(os.Stderr, "racekit: %v; recording every access\n", err)
	}
}

// setSampler switches sampling on with the named sampler (tests call it
// between traces). mode is "", "sync" or "dispatch" (see above).
func setSampler(name string, seed int64, mode string) error {
	resetSampling()
	if name == "" {
		return nil
	}
	p, err := sample.Lookup(name)
	if err != nil {
		return fmt.Errorf("RACEKIT_SAMPLE: %v", err)
	}
	switch mode {
	case "":
	case "sync":
		sampleNoAccess = true
	case "dispatch":
		dispatchOnly = true
	default:
		return fmt.Errorf("RACEKIT_SAMPLE_MODE=%q (want sync or dispatch)", mode)
	}
	samplePol, sampleSeed, sampleThresh = p, seed, sample.Threshold(p.Prob)
	sampling = true
	quickCheck = !sampleNoAccess && (p.Scope == sample.PerGoroutine || p.Scope == sample.PerSlot)
	barriersOn = barriersEnv == "1"                 // see barriersOn
	loopsOn = loopsEnv && p.Scope != sample.PerCall // loop.go
	return nil
}

// resetSampling switches sampling off and forgets the global counters.
func resetSampling() {
	sampling, sampleNoAccess, dispatchOnly, loopsOn, quickCheck = false, false, false, false, false
	barriersOn = barriersEnv != "0"
	for i := range gpages {
		gpages[i].Store(nil)
	}
	groot.Store(0)
	gbigMu.Lock()
	gbig = nil
	gbigMu.Unlock()
	for i := range dtab {
		dtab[i].Store(nil)
	}
	siteMu.Lock()
	siteRegions = nil
	siteMu.Unlock()
	slotMu.Lock()
	slotFree = nil
	slotMu.Unlock()
}

// enter is the dispatch check of a call of fn by goroutine gid (made
// already when decided: Sampled), whose
// frame is now at depth: it keeps the decision in the frame's bit and
// returns it. Nothing is undone when the frame returns: the caller's bit
// is still where it was (inRecorded reads them).
func (s *sampleState) enter(gid trace.GID, depth int32, fn uint32, decided bool) bool {
	ok := decided || s.decide(gid, uint64(fn))
	if depth <= 0 {
		return ok // a frame rt cannot place: its accesses count as the root's
	}
	i := uint32(depth - 1)
	for int(i/64) >= len(s.bits) {
		s.bits = append(s.bits, 0)
	}
	if ok {
		s.bits[i/64] |= 1 << (i % 64)
	} else {
		s.bits[i/64] &^= 1 << (i % 64)
	}
	return ok
}

// inRecorded reports whether an access made at depth (outside every frame
// when 0) is in a sampled invocation: its frame's bit, or the start
// routine's check, made at the goroutine's first access outside every
// frame.
func (s *sampleState) inRecorded(gid trace.GID, depth int32) bool {
	if depth > 0 {
		if i := uint32(depth - 1); int(i/64) < len(s.bits) {
			return s.bits[i/64]>>(i%64)&1 != 0
		}
	}
	if !s.rootDone {
		s.rootRec, s.rootDone = s.decide(gid, sample.RootFunc), true
	}
	return s.rootRec
}

// decide is the sampler's decision for a call of fn (sample.RootFunc: the
// goroutine's start routine) by goroutine gid: the next step of the
// counter the policy's scope keeps for it, or a random draw.
func (s *sampleState) decide(gid trace.GID, fn uint64) bool {
	switch samplePol.Scope {
	case sample.PerSlot:
		sl := s.slot
		if sl == nil {
			sl = s.takeSlot()
		}
		if fn == sample.RootFunc {
			ok := sl.root.Next(&samplePol.Schedule)
			if !s.forked {
				s.returned() // a root's accesses outside every frame: a call of their own
			}
			return ok
		}
		return sl.ctab.get(uint32(fn)).Next(&samplePol.Schedule)
	case sample.PerSite:
		if s.forked {
			r := s.reg
			if r == nil {
				r = s.region()
			}
			return r.next(fn)
		}
		fallthrough // born in untraced code: its own counters
	case sample.PerGoroutine:
		if fn == sample.RootFunc {
			return s.root.Next(&samplePol.Schedule)
		}
		return s.ctab.get(uint32(fn)).Next(&samplePol.Schedule)
	case sample.Global:
		return globalNext(fn)
	}
	return s.draw(gid)
}

// quickTable is the table of Counters decide would step for the
// goroutine's calls, nil when it holds none yet (Sampled's fast path, only
// with quickCheck).
func (s *sampleState) quickTable() *counterTable {
	if samplePol.Scope == sample.PerSlot {
		if s.slot == nil {
			return nil
		}
		return &s.slot.ctab
	}
	return &s.ctab
}

// quickStep is Sampled's fast step of fn's Counter (only with
// quickCheck): ok when the Counter was found among the first places of
// the goroutine's table and stood in the middle of a run; then sampled is
// the call's decision, as decide's. Otherwise nothing changed.
func (s *sampleState) quickStep(fn uint32) (sampled, ok bool) {
	if t := s.quickTable(); t != nil {
		if c := t.first(fn); c != nil {
			return c.Quick()
		}
	}
	return false, false
}

// quickSkip is Enter's fast path in the goroutine's sample state (only
// with quickCheck): for a call of fn whose frame will be at depth+1, in a
// run of unsampled calls of a Counter found among the first places, it
// counts the call, clears the frame's bit (as enter does) and reports
// true. Otherwise nothing changed.
func (s *sampleState) quickSkip(fn uint32, depth int32) bool {
	d := uint32(depth)
	if int(d/64) >= len(s.bits) {
		return false
	}
	if t := s.quickTable(); t != nil {
		if c := t.first(fn); c != nil && c.QuickSkip() {
			s.bits[d/64] &^= 1 << (d % 64)
			return true
		}
	}
	return false
}

// draw is a random sampler's decision: the goroutine's next draw.
func (s *sampleState) draw(gid trace.GID) bool {
	if !s.seeded {
		s.rng, s.seeded = sample.NewRand(sampleSeed, gid), true
	}
	return s.rng.Below(sampleThresh)
}

// sampleSkip reports whether g's access now goes unrecorded (sampling is
// on): its invocation is not sampled, or no access is
// (RACEKIT_SAMPLE_MODE=sync).
func (g *gstate) sampleSkip() bool {
	return sampleNoAccess || !g.samp.inRecorded(g.gid, g.depth)
}

// counterTable is an open-addressing hash table from function to Counter,
// owned by one goroutine: no lock, no allocation once grown.
type counterTable struct {
	keys []uint32 // fn+1; 0 is empty
	vals []sample.Counter
	n    int
}

// first is fn's Counter if it is among the first places get looks (the
// function's own, or one of the next three after keys that took it), else
// nil.
func (t *counterTable) first(fn uint32) *sample.Counter {
	k := fn + 1
	mask := uint32(len(t.keys) - 1)
	i := (k * 0x9e3779b1) & mask
	for range 4 {
		if int(i) >= len(t.keys) {
			return nil
		}
		if t.keys[i] == k {
			return &t.vals[i]
		}
		i = (i + 1) & mask
	}
	return nil
}

func (t *counterTable) get(fn uint32) *sample.Counter {
	k := fn + 1
	if len(t.keys) == 0 {
		t.keys, t.vals = make([]uint32, 16), make([]sample.Counter, 16)
	}
retry:
	mask := uint32(len(t.keys) - 1)
	for i := (k * 0x9e3779b1) & mask; ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return &t.vals[i]
		case 0:
			if 4*(t.n+1) > 3*len(t.keys) {
				t.grow()
				goto retry
			}
			t.keys[i] = k
			t.n++
			return &t.vals[i]
		}
	}
}

func (t *counterTable) grow() {
	keys, vals := t.keys, t.vals
	t.keys, t.vals = make([]uint32, 2*len(keys)), make([]sample.Counter, 2*len(keys))
	mask := uint32(len(t.keys) - 1)
	for j, k := range keys {
		if k == 0 {
			continue
		}
		i := (k * 0x9e3779b1) & mask
		for t.keys[i] != 0 {
			i = (i + 1) & mask
		}
		t.keys[i], t.vals[i] = k, vals[j]
	}
}

// The global samplers' counters: one per function, as a word updated by
// compare-and-swap (a sample.Counter is 8 bytes). Functions are site IDs,
// dense from 1: pages cover the first 1<<20, a map under a mutex the rest.
const (
	gPageBits = 12
	gPages    = 256
)

// sample.Counter must be exactly one word for globalNext.
var _ [8 - unsafe.Sizeof(sample.Counter{})]struct{}
var _ [unsafe.Sizeof(sample.Counter{}) - 8]struct{}

var (
	gpages [gPages]OwnPointer[[1 << gPageBits]OwnUint64]
	groot  OwnUint64 // sample.RootFunc
	gbigMu OwnMutex
	gbig   map[uint64]*sample.Counter
)

// globalNext counts one call of fn by any goroutine and reports whether
// it is sampled.
func globalNext(fn uint64) bool {
	var cell *OwnUint64
	switch p := fn >> gPageBits; {
	case fn == sample.RootFunc:
		cell = &groot
	case p < gPages:
		pg := gpages[p].Load()
		if pg == nil {
			pg = new([1 << gPageBits]OwnUint64)
			if !gpages[p].CompareAndSwap(nil, pg) {
				pg = gpages[p].Load()
			}
		}
		cell = &pg[fn&(1<<gPageBits-1)]
	default:
		gbigMu.Lock()
		defer gbigMu.Unlock()
		if gbig == nil {
			gbig = map[uint64]*sample.Counter{}
		}
		c := gbig[fn]
		if c == nil {
			c = new(sample.Counter)
			gbig[fn] = c
		}
		return c.Next(&samplePol.Schedule)
	}
	return casNext(cell)
}

// siteRegion is the counters of one go statement under gs-ad: a word
// per function, updated by compare-and-swap as globalNext does, in pages
// of 256 functions allocated on first use (2 KB each; functions are site
// IDs, so a go statement's pages are those of the functions its
// goroutines call), a map under a mutex beyond the first 1<<18 functions.
type siteRegion struct {
	root  OwnUint64 // sample.RootFunc
	pages [sitePages]OwnPointer[[1 << sitePageBits]OwnUint64]
	bigMu OwnMutex
	big   map[uint64]*sample.Counter
}

const (
	sitePageBits = 8
	sitePages    = 1 << 10
)

// The go statements' regions, each looked up once per goroutine.
var (
	siteMu      OwnMutex
	siteRegions map[uint32]*siteRegion
)

// region looks up the counters of the forked goroutine's go statement.
func (s *sampleState) region() *siteRegion {
	siteMu.Lock()
	r := siteRegions[s.forkSite]
	if r == nil {
		if siteRegions == nil {
			siteRegions = map[uint32]*siteRegion{}
		}
		r = new(siteRegion)
		siteRegions[s.forkSite] = r
	}
	siteMu.Unlock()
	s.reg = r
	return r
}

// next counts one call of fn by a goroutine of the region's go statement
// and reports whether it is sampled.
func (r *siteRegion) next(fn uint64) bool {
	var cell *OwnUint64
	switch p := fn >> sitePageBits; {
	case fn == sample.RootFunc:
		cell = &r.root
	case p < sitePages:
		pg := r.pages[p].Load()
		if pg == nil {
			pg = new([1 << sitePageBits]OwnUint64)
			if !r.pages[p].CompareAndSwap(nil, pg) {
				pg = r.pages[p].Load()
			}
		}
		cell = &pg[fn&(1<<sitePageBits-1)]
	default:
		r.bigMu.Lock()
		defer r.bigMu.Unlock()
		if r.big == nil {
			r.big = map[uint64]*sample.Counter{}
		}
		c := r.big[fn]
		if c == nil {
			c = new(sample.Counter)
			r.big[fn] = c
		}
		return c.Next(&samplePol.Schedule)
	}
	return casNext(cell)
}

// slotCounters is one slot of a tp-ad pool: the counters of the goroutine
// that holds it, its own alone while it holds it, so the check per call is
// tl-ad's (a lookup in a table no other goroutine touches).
type slotCounters struct {
	root sample.Counter // sample.RootFunc
	ctab counterTable
}

// slotKey names a tp-ad pool: a go statement's, or that of the goroutines
// born in untraced code.
type slotKey struct {
	site uint32
	root bool
}

// The free slots of each pool, the last freed last: a goroutine takes one
// at its first check and gives it back when it ends (a root: when it
// returns to untraced code), under slotMu, once per goroutine (a root: per
// call from untraced code).
var (
	slotMu   OwnMutex
	slotFree map[slotKey][]*slotCounters
)

// takeSlot gives the goroutine the slot of its pool freed last, or a new
// one.
func (s *sampleState) takeSlot() *slotCounters {
	k := slotKey{site: s.forkSite, root: !s.forked}
	slotMu.Lock()
	var sl *slotCounters
	if free := slotFree[k]; len(free) > 0 {
		sl = free[len(free)-1]
		free[len(free)-1] = nil
		slotFree[k] = free[:len(free)-1]
	}
	slotMu.Unlock()
	if sl == nil {
		sl = new(slotCounters)
	}
	s.slot = sl
	return sl
}

// returned gives the goroutine's slot, if it holds one, back to its pool:
// the goroutine ended, or, born in untraced code, returned to it (Leave at
// depth 0), so that the next call from untraced code, by any goroutine,
// runs on these counters as a pool thread runs its next task.
func (s *sampleState) returned() {
	sl := s.slot
	if sl == nil {
		return
	}
	s.slot = nil
	k := slotKey{site: s.forkSite, root: !s.forked}
	slotMu.Lock()
	if slotFree == nil {
		slotFree = map[slotKey][]*slotCounters{}
	}
	slotFree[k] = append(slotFree[k], sl)
	slotMu.Unlock()
}

// casNext advances the Counter held in cell by one call, by
// compare-and-swap, and reports whether the call is sampled.
func casNext(cell *OwnUint64) bool {
	for {
		old := cell.Load()
		w := old
		c := (*sample.Counter)(unsafe.Pointer(&w))
		ok := c.Next(&samplePol.Schedule)
		if cell.CompareAndSwap(old, w) {
			return ok
		}
	}
}

// Dispatch-only mode (RACEKIT_SAMPLE_MODE=dispatch): nothing is traced,
// so goroutines have no gstate; a direct-mapped table by goid holds their
// dispatch state (a collision starts a fresh state: this mode measures the
// check's cost, its decisions are not used). Fork does not run either, so
// under gs-ad every goroutine keeps its own counters, as a root does.
type dstate struct {
	goid  uint64
	depth int32
	samp  sampleState
}

var dtab [gtabSize]OwnPointer[dstate]

func dcur() *dstate {
	id := goid()
	slot := &dtab[id&(gtabSize-1)]
	if d := slot.Load(); d != nil && d.goid == id {
		return d
	}
	d := &dstate{goid: id}
	slot.Store(d)
	return d
}

// dispatchEnter is Enter in dispatch-only mode.
func dispatchEnter(fn uint32) {
	d := dcur()
	quick := quickCheck && d.depth > 0 && d.samp.quickSkip(fn, d.depth) // the fast path, as in enter
	d.depth++
	if !quick {
		d.samp.enter(trace.GID(d.goid), d.depth, fn, false)
	}
}

// dispatchSampled is Sampled in dispatch-only mode.
func dispatchSampled(fn uint32) {
	d := dcur()
	if quickCheck && d.depth > 0 {
		if _, quick := d.samp.quickStep(fn); quick {
			return // the fast path, as in Sampled
		}
	}
	if !d.samp.decide(trace.GID(d.goid), uint64(fn)) && d.depth == 0 {
		d.samp.returned()
	}
}

// dispatchLeave is Leave in dispatch-only mode. Every goroutine counts
// as born in untraced code here, so under tp-ad each gives its slot back
// when it returns to depth 0.
func dispatchLeave() {
	d := dcur()
	if d.depth--; d.depth == 0 {
		d.samp.returned()
	}
}
