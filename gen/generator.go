package gen

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Object IDs are word addresses: object index i is at objBase + 8*i.
// Indexes run: shared variables (racy, handed off, lock-protected), the
// locals of goroutine 0, 1, ..., atomic words, locks, sync objects,
// functions. Variables, locals and atomics index the values table directly.
const objBase = 0x1000

// Each shared (non-racy) variable and each local has four sites: two read
// sites and two write sites, so that a variable is touched from more than
// one place.
const (
	sitesPerVar  = 4
	sitesPerLock = 4 // acquire, release, read-acquire, read-release
	sitesPerAtom = 3 // load, store, rmw
	sitesPerSync = 2 // snd, rcv
	sitesPerFunc = 2 // enter, exit
)

// Step mix constants that are not worth a knob.
const (
	closeChance     = 0.25 // a step closes the innermost lock or frame
	protectedChance = 0.8  // an access inside a critical section uses its variables
	sendChance      = 0.25 // an owner of handed-off variables sends one
	plantRetry      = 16   // events to wait before retrying a race with no partner
	plantSpan       = 0.8  // races are due within the first plantSpan of the trace
)

type status uint8

const (
	unborn  status = iota
	ready          // forked, Begin not yet written
	running        // between Begin and End
	blocked        // waiting to join a child that has not ended
	done           // ended
)

type scopeKind uint8

const (
	scopeLock scopeKind = iota
	scopeRLock
	scopeFunc
)

// scope is an open critical section or function frame.
type scope struct {
	obj  int32 // lock or function index
	kind scopeKind
}

// step is a fork or join that a goroutine performs once it has done at
// least `at` work steps.
type step struct {
	at    int64
	child int32
	join  bool
	site  trace.SiteID
}

// role is a racy access a goroutine may repeat.
type role struct {
	slot  int32
	site  trace.SiteID
	write bool
}

type gstate struct {
	status  status
	parent  int32
	waitFor int32
	pos     int32 // index in generator.run, -1 when not runnable
	budget  int64 // work steps left
	done    int64 // work steps taken
	steps   []step
	next    int
	stack   []scope
	nLocks  int32 // locks held
	nVarLk  int32 // held locks that protect variables
	nFuncs  int32 // open frames
	roles   []role
	owned   []int32 // handed-off variables owned (variable indexes)
}

type lockState struct {
	writer  int32 // holder in write mode, or -1
	readers int32
	v0, v1  int32 // protected variables [v0, v1)
}

// Owner values of a handed-off variable besides a goroutine ID.
const (
	hoFree     = -1 // never owned
	hoInFlight = -2 // sent, not yet received
)

type generator struct {
	cfg  Config
	w    trace.Writer
	rng  *rand.PCG
	buf  uint64 // last PCG output
	half bool   // the high half of buf is unused
	ev   trace.Event
	seq  uint64
	err  error

	gs   []gstate
	run  []int32 // runnable goroutines
	cur  int32
	lk   []lockState
	vals []uint64 // current value per variable, local and atomic; nil without Values
	ctr  uint64   // last value written
	vflg trace.Flags

	// Counts.
	nG, nRacy, nHand, nLocals, nAtomic, nLocks, nSync, nFuncs int32

	// First object index of each kind.
	oLocal, oAtomic, oLock, oSync, oFunc int32

	// First site of each kind.
	sShared, sLocal, sLock, sAtomic, sSync, sFunc, sFork, nSites trace.SiteID

	// Thresholds for u32 draws (see prob).
	tSwitch, tClose, tLock, tFunc, tAtomic, tSync, tRead, tRLock uint64
	tProt, tHand, tSend, tRepeat                                 uint64

	// Handed-off variables: owner (goroutine, hoFree or hoInFlight) and the
	// sync object a variable in flight was sent on.
	hoOwner []int32
	hoChan  []int32

	// Planted races.
	nextPlant int32
	plantAt   uint64
	races     []Race
}

func newGenerator(c Config, w trace.Writer) *generator {
	g := &generator{cfg: c, w: w, rng: rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15), cur: -1}
	g.nG = int32(c.Goroutines)
	if c.RacyFraction > 0 && c.Vars > 0 {
		g.nRacy = int32(max(1, math.Round(c.RacyFraction*float64(c.Vars))))
	}
	g.nHand = min(int32(math.Round(c.HandoffFraction*float64(c.Vars))), int32(c.Vars)-g.nRacy)
	g.nLocals = int32(c.Locals)
	g.nAtomic = int32(c.AtomicVars)
	g.nLocks = int32(c.Locks)
	g.nSync = int32(c.SyncObjs)
	g.nFuncs = int32(c.Funcs)

	g.oLocal = int32(c.Vars)
	g.oAtomic = g.oLocal + g.nG*g.nLocals
	g.oLock = g.oAtomic + g.nAtomic
	g.oSync = g.oLock + g.nLocks
	g.oFunc = g.oSync + g.nSync

	g.sShared = 1 + 2*trace.SiteID(g.nRacy)
	g.sLocal = g.sShared + sitesPerVar*trace.SiteID(int32(c.Vars)-g.nRacy)
	g.sLock = g.sLocal + sitesPerVar*trace.SiteID(g.nLocals)
	g.sAtomic = g.sLock + sitesPerLock*trace.SiteID(g.nLocks)
	g.sSync = g.sAtomic + sitesPerAtom*trace.SiteID(g.nAtomic)
	g.sFunc = g.sSync + sitesPerSync*trace.SiteID(g.nSync)
	g.sFork = g.sFunc + sitesPerFunc*trace.SiteID(g.nFuncs)
	g.nSites = g.sFork + 4 // fork left/right, join left/right

	g.tSwitch = prob(c.Switch)
	g.tClose = prob(closeChance)
	g.tLock = prob(c.LockFraction)
	g.tFunc = prob(c.LockFraction + c.FuncFraction)
	g.tAtomic = prob(c.LockFraction + c.FuncFraction + c.AtomicFraction)
	g.tSync = prob(c.LockFraction + c.FuncFraction + c.AtomicFraction + c.SyncFraction)
	g.tRead = prob(c.ReadFraction)
	g.tRLock = prob(c.RLockFraction)
	g.tProt = prob(protectedChance)
	g.tHand = prob(c.HandoffFraction)
	g.tSend = prob(sendChance)
	g.tRepeat = prob(c.RepeatFraction)

	if c.Values {
		g.vals = make([]uint64, g.oLock)
	} else {
		g.vflg = trace.FlagValueUnknown
	}

	g.lk = make([]lockState, g.nLocks)
	p0 := int64(g.nRacy + g.nHand)
	np := int64(c.Vars) - p0
	for l := range g.lk {
		g.lk[l] = lockState{
			writer: -1,
			v0:     int32(p0 + int64(l)*np/int64(g.nLocks)),
			v1:     int32(p0 + int64(l+1)*np/int64(g.nLocks)),
		}
	}
	g.hoOwner = make([]int32, g.nHand)
	g.hoChan = make([]int32, g.nHand)
	for i := range g.hoOwner {
		g.hoOwner[i] = hoFree
	}
	g.plantAt = math.MaxUint64
	if g.nRacy > 0 {
		g.plantAt = g.due(0)
	}

	g.gs = make([]gstate, g.nG)
	g.run = make([]int32, 0, g.nG)
	// One backing array for all the scope stacks, each of which holds at
	// most Nesting locks and FuncDepth frames.
	depth := c.Nesting + c.FuncDepth
	stacks := make([]scope, len(g.gs)*depth)
	for i := range g.gs {
		g.gs[i] = gstate{parent: -1, waitFor: -1, pos: -1, stack: stacks[i*depth : i*depth : (i+1)*depth]}
	}
	g.plan()
	return g
}

// plan splits the work budget among the goroutines and sets their forks
// and joins according to the shape.
func (g *generator) plan() {
	n := int(g.nG)
	work := uint64(g.cfg.Events - MinEvents(n))
	weights := make([]uint64, n)
	var sum uint64
	for i := range weights {
		weights[i] = 512 + uint64(g.intn(1024))
		sum += weights[i]
	}
	var cum, prev uint64
	for i := range g.gs {
		cum += weights[i]
		upto := mulDiv(work, cum, sum)
		g.gs[i].budget = int64(upto - prev)
		prev = upto
	}

	fork := func(p, c int, at int64, side trace.SiteID) {
		g.gs[p].steps = append(g.gs[p].steps, step{at: at, child: int32(c), site: g.sFork + side})
		g.gs[c].parent = int32(p)
	}
	join := func(p, c int, at int64, side trace.SiteID) {
		g.gs[p].steps = append(g.gs[p].steps, step{at: at, child: int32(c), join: true, site: g.sFork + 2 + side})
	}
	early := func(p int) int64 { return int64(g.intn(int(min(g.gs[p].budget/2, math.MaxInt32)) + 1)) }

	switch g.cfg.Shape {
	case Flat:
		for c := 1; c < n; c++ {
			fork(0, c, 0, 0)
		}
		for c := 1; c < n; c++ {
			join(0, c, g.gs[0].budget, 0)
		}
	case Tree:
		for p := range n {
			var kids []int
			for side := 1; side <= 2 && 2*p+side < n; side++ {
				c := 2*p + side
				fork(p, c, early(p), trace.SiteID(side-1))
				kids = append(kids, c)
			}
			slices.SortStableFunc(g.gs[p].steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })
			for i, c := range kids {
				join(p, c, g.gs[p].budget, trace.SiteID(i))
			}
		}
	case Chain:
		for p := 0; p+1 < n; p++ {
			fork(p, p+1, early(p), 0)
			join(p, p+1, g.gs[p].budget, 0)
		}
	case Waves:
		k := g.cfg.WaveSize
		waves := (n - 1 + k - 1) / k
		b := uint64(g.gs[0].budget)
		for w := range waves {
			lo, hi := 1+w*k, min(n, 1+(w+1)*k)
			for c := lo; c < hi; c++ {
				fork(0, c, int64(mulDiv(b, uint64(w), uint64(waves))), 0)
			}
			for c := lo; c < hi; c++ {
				join(0, c, int64(mulDiv(b, uint64(w+1), uint64(waves))), 0)
			}
		}
	}
}

// mulDiv returns a*b/c without overflow (the result must fit; c > 0).
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// due is when racy variable k should get its race: spread evenly, with
// jitter, over the first plantSpan of the trace.
func (g *generator) due(k int32) uint64 {
	span := uint64(float64(g.cfg.Events) * plantSpan)
	r := uint64(g.nRacy)
	return mulDiv(span, uint64(k), r) + uint64(g.intn(int(min(span/r, math.MaxInt32))+1))
}

// u32 returns a uniform value in [0, 2^32): half of a PCG output, so
// that one call to the PCG serves two decisions.
func (g *generator) u32() uint64 {
	if g.half {
		g.half = false
		return g.buf >> 32
	}
	return g.refill()
}

// refill is u32's slow path, kept out of line so that u32 inlines.
//
//go:noinline
func (g *generator) refill() uint64 {
	g.buf = g.rng.Uint64()
	g.half = true
	return g.buf & math.MaxUint32
}

// intn returns a uniform value in [0, n), n <= 2^32.
func (g *generator) intn(n int) int { return int(g.u32() * uint64(n) >> 32) }

func (g *generator) addr(obj int32) uint64 { return objBase + 8*uint64(obj) }

// define writes the site table, object names and goroutine 0.
func (g *generator) define() error {
	w := g.w
	id := trace.SiteID(1)
	def := func(file string, line int, fn string) {
		if g.err == nil {
			g.err = w.DefineSite(id, trace.Site{File: file, Line: line, Func: fn})
		}
		id++
	}
	itoa := strconv.Itoa
	for r := range int(g.nRacy) {
		def("synth/racy.go", 4*r+10, "synth.racer"+itoa(r))
		def("synth/racy.go", 4*r+12, "synth.peer"+itoa(r))
	}
	for v := g.nRacy; v < int32(g.cfg.Vars); v++ {
		name := g.varName(v)
		for k := range sitesPerVar {
			def("synth/shared.go", sitesPerVar*int(v-g.nRacy)+k+10, "synth.use_"+name)
		}
	}
	for j := range int(g.nLocals) {
		for k := range sitesPerVar {
			def("synth/local.go", sitesPerVar*j+k+10, "synth.local"+itoa(j))
		}
	}
	for l := range int(g.nLocks) {
		for k := range sitesPerLock {
			def("synth/lock.go", sitesPerLock*l+k+10, "synth.critical"+itoa(l))
		}
	}
	for a := range int(g.nAtomic) {
		for k := range sitesPerAtom {
			def("synth/atomic.go", sitesPerAtom*a+k+10, "synth.counter"+itoa(a))
		}
	}
	for s := range int(g.nSync) {
		def("synth/chan.go", sitesPerSync*s+10, "synth.send"+itoa(s))
		def("synth/chan.go", sitesPerSync*s+11, "synth.recv"+itoa(s))
	}
	for f := range int(g.nFuncs) {
		def("synth/funcs.go", 10*f+10, "synth.f"+itoa(f))
		def("synth/funcs.go", 10*f+19, "synth.f"+itoa(f))
	}
	def("synth/main.go", 20, "synth.spawn")
	def("synth/main.go", 21, "synth.spawn")
	def("synth/main.go", 30, "synth.wait")
	def("synth/main.go", 31, "synth.wait")
	if g.err != nil {
		return g.err
	}
	if id != g.nSites {
		return fmt.Errorf("gen: internal error: defined %d sites, want %d", id-1, g.nSites-1)
	}

	name := func(obj int32, n string) {
		if g.err == nil {
			g.err = w.DefineName(g.addr(obj), n)
		}
	}
	for v := range int32(g.cfg.Vars) {
		name(v, g.varName(v))
	}
	for gid := range g.nG {
		for j := range g.nLocals {
			name(g.oLocal+gid*g.nLocals+j, "g"+itoa(int(gid))+".l"+itoa(int(j)))
		}
	}
	for a := range g.nAtomic {
		name(g.oAtomic+a, "a"+itoa(int(a)))
	}
	for l := range g.nLocks {
		name(g.oLock+l, "mu"+itoa(int(l)))
	}
	for s := range g.nSync {
		name(g.oSync+s, "ch"+itoa(int(s)))
	}
	for f := range g.nFuncs {
		name(g.oFunc+f, "synth.f"+itoa(int(f)))
	}
	if g.err != nil {
		return g.err
	}
	return w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "main"})
}

func (g *generator) varName(v int32) string {
	switch {
	case v < g.nRacy:
		return "racy" + strconv.Itoa(int(v))
	case v < g.nRacy+g.nHand:
		return "msg" + strconv.Itoa(int(v-g.nRacy))
	}
	return "x" + strconv.Itoa(int(v-g.nRacy-g.nHand))
}

func (g *generator) loop() error {
	if err := g.define(); err != nil {
		return err
	}
	g.gs[0].status = ready
	g.addRun(0)
	for g.gs[0].status != done {
		if len(g.run) == 0 {
			return fmt.Errorf("gen: internal error: no runnable goroutine at event %d", g.seq)
		}
		g.stepG(g.pick())
		if g.err != nil {
			return g.err
		}
	}
	if g.seq != uint64(g.cfg.Events) {
		return fmt.Errorf("gen: internal error: wrote %d events, want %d", g.seq, g.cfg.Events)
	}
	return nil
}

func (g *generator) truth() *Truth {
	slices.SortFunc(g.races, func(a, b Race) int {
		return cmp.Or(cmp.Compare(a.Pair.A, b.Pair.A), cmp.Compare(a.Pair.B, b.Pair.B))
	})
	if g.races == nil {
		g.races = []Race{}
	}
	return &Truth{
		Config:       g.cfg,
		Events:       int64(g.seq),
		Races:        g.races,
		Unplanted:    int(g.nRacy) - len(g.races),
		LocksetExact: g.nHand == 0,
	}
}

func (g *generator) addRun(id int32) {
	g.gs[id].pos = int32(len(g.run))
	g.run = append(g.run, id)
}

func (g *generator) delRun(id int32) {
	p := g.gs[id].pos
	last := g.run[len(g.run)-1]
	g.run[p] = last
	g.gs[last].pos = p
	g.run = g.run[:len(g.run)-1]
	g.gs[id].pos = -1
}

// pick chooses the goroutine that takes the next step.
func (g *generator) pick() int32 {
	if g.cur >= 0 && g.gs[g.cur].pos >= 0 && g.u32() >= g.tSwitch {
		return g.cur
	}
	g.cur = g.run[g.intn(len(g.run))]
	return g.cur
}

func (g *generator) emit(id int32, op trace.Op, fl trace.Flags, site trace.SiteID, obj, val uint64) {
	if g.err != nil {
		return
	}
	e := &g.ev
	e.Seq = g.seq
	e.G = trace.GID(id)
	e.Op = op
	e.Flags = fl
	e.Site = site
	e.Obj = obj
	e.Value = val
	g.seq++
	if err := g.w.WriteEvent(e); err != nil && g.err == nil {
		g.err = err
	}
}

// stepG lets goroutine id take one step: at most one event, except a
// planted race, which writes two.
func (g *generator) stepG(id int32) {
	s := &g.gs[id]
	if s.status == ready {
		s.status = running
		g.emit(id, trace.OpBegin, 0, trace.NoSite, 0, 0)
		return
	}
	if s.next < len(s.steps) && s.steps[s.next].at <= s.done {
		g.structural(id, s)
		return
	}
	if s.budget > 0 {
		g.work(id, s)
		return
	}
	s.status = done
	g.delRun(id)
	g.emit(id, trace.OpEnd, 0, trace.NoSite, 0, 0)
	if s.parent >= 0 {
		p := &g.gs[s.parent]
		if p.status == blocked && p.waitFor == id {
			p.status = running
			p.waitFor = -1
			g.addRun(s.parent)
		}
	}
}

func (g *generator) structural(id int32, s *gstate) {
	st := s.steps[s.next]
	c := &g.gs[st.child]
	if st.join {
		if c.status != done {
			s.status = blocked
			s.waitFor = st.child
			g.delRun(id)
			return
		}
		s.next++
		g.emit(id, trace.OpJoin, 0, st.site, uint64(st.child), 0)
		// The join orders everything the child did before what the parent
		// does next: the parent inherits the child's handed-off variables.
		for _, v := range c.owned {
			g.hoOwner[v-g.nRacy] = id
			s.owned = append(s.owned, v)
		}
		c.owned = c.owned[:0]
		return
	}
	s.next++
	if err := g.w.DefineGoroutine(trace.Goroutine{ID: trace.GID(st.child), Parent: trace.GID(id), Site: st.site}); err != nil {
		g.err = err
		return
	}
	c.status = ready
	g.addRun(st.child)
	g.emit(id, trace.OpFork, 0, st.site, uint64(st.child), 0)
}

// work takes one work step of goroutine id, whose budget is positive.
// A goroutine never opens a scope it could not close within its budget:
// budget >= len(stack) always holds, and when they are equal it closes.
func (g *generator) work(id int32, s *gstate) {
	d := int64(len(s.stack))
	if s.budget == d {
		s.budget--
		s.done++
		g.closeTop(id, s)
		return
	}
	if g.seq >= g.plantAt && g.plant(id, s) {
		return
	}
	s.budget--
	s.done++
	if d > 0 && g.u32() < g.tClose {
		g.closeTop(id, s)
		return
	}
	u := g.u32()
	switch {
	case u < g.tLock:
		if s.budget > d && g.acquire(id, s) {
			return
		}
	case u < g.tFunc:
		if s.budget > d && g.nFuncs > 0 && int(s.nFuncs) < g.cfg.FuncDepth {
			f := int32(g.intn(int(g.nFuncs)))
			s.stack = append(s.stack, scope{obj: f, kind: scopeFunc})
			s.nFuncs++
			g.emit(id, trace.OpFuncEnter, 0, g.sFunc+sitesPerFunc*trace.SiteID(f), g.addr(g.oFunc+f), 0)
			return
		}
	case u < g.tAtomic:
		if g.nAtomic > 0 {
			g.atomic(id)
			return
		}
	case u < g.tSync:
		if g.nSync > 0 {
			o := int32(g.intn(int(g.nSync)))
			op, site := trace.OpSyncRelease, g.sSync+sitesPerSync*trace.SiteID(o)
			if g.u32()&1 == 0 {
				op, site = trace.OpSyncAcquire, site+1
			}
			g.emit(id, op, 0, site, g.addr(g.oSync+o), 0)
			return
		}
	}
	g.data(id, s)
}

func (g *generator) closeTop(id int32, s *gstate) {
	sc := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	switch sc.kind {
	case scopeFunc:
		s.nFuncs--
		g.emit(id, trace.OpFuncExit, 0, g.sFunc+sitesPerFunc*trace.SiteID(sc.obj)+1, g.addr(g.oFunc+sc.obj), 0)
		return
	case scopeLock:
		g.lk[sc.obj].writer = -1
	case scopeRLock:
		g.lk[sc.obj].readers--
	}
	s.nLocks--
	if g.lk[sc.obj].v1 > g.lk[sc.obj].v0 {
		s.nVarLk--
	}
	site := g.sLock + sitesPerLock*trace.SiteID(sc.obj) + 1
	var fl trace.Flags
	if sc.kind == scopeRLock {
		site += 2
		fl = trace.FlagReadLock
	}
	g.emit(id, trace.OpRelease, fl, site, g.addr(g.oLock+sc.obj), 0)
}

// acquire tries a few locks that goroutine id could take without waiting
// and takes the first one it finds.
func (g *generator) acquire(id int32, s *gstate) bool {
	if g.nLocks == 0 || int(s.nLocks) >= g.cfg.Nesting {
		return false
	}
	read := g.u32() < g.tRLock
	for range 3 {
		l := int32(g.intn(int(g.nLocks)))
		ls := &g.lk[l]
		if ls.writer >= 0 || (!read && ls.readers > 0) || (ls.readers > 0 && holds(s, l)) {
			continue
		}
		site := g.sLock + sitesPerLock*trace.SiteID(l)
		kind, fl := scopeLock, trace.Flags(0)
		if read {
			ls.readers++
			kind, fl, site = scopeRLock, trace.FlagReadLock, site+2
		} else {
			ls.writer = id
		}
		s.stack = append(s.stack, scope{obj: l, kind: kind})
		s.nLocks++
		if ls.v1 > ls.v0 {
			s.nVarLk++
		}
		g.emit(id, trace.OpAcquire, fl, site, g.addr(g.oLock+l), 0)
		return true
	}
	return false
}

func holds(s *gstate, l int32) bool {
	for _, sc := range s.stack {
		if sc.kind != scopeFunc && sc.obj == l {
			return true
		}
	}
	return false
}

// shareLock reports whether a and b hold a common lock in any mode.
func shareLock(a, b *gstate) bool {
	if a.nLocks == 0 || b.nLocks == 0 {
		return false
	}
	for _, sc := range a.stack {
		if sc.kind != scopeFunc && holds(b, sc.obj) {
			return true
		}
	}
	return false
}

func (g *generator) atomic(id int32) {
	a := int32(g.intn(int(g.nAtomic)))
	slot := g.oAtomic + a
	site := g.sAtomic + sitesPerAtom*trace.SiteID(a)
	u := g.u32()
	op := trace.OpAtomicLoad
	switch {
	case u < g.tRead:
	case u&1 == 0:
		op, site = trace.OpAtomicStore, site+1
	default:
		op, site = trace.OpAtomicRMW, site+2
	}
	var val uint64
	if g.vals != nil {
		if op != trace.OpAtomicLoad {
			g.ctr++
			g.vals[slot] = g.ctr
		}
		val = g.vals[slot]
	}
	g.emit(id, op, g.vflg, site, g.addr(slot), val)
}

// access writes a plain access to the variable, local or atomic at slot.
func (g *generator) access(id, slot int32, site trace.SiteID, write bool) {
	op := trace.OpRead
	if write {
		op = trace.OpWrite
	}
	var val uint64
	if g.vals != nil {
		if write {
			g.ctr++
			g.vals[slot] = g.ctr
		}
		val = g.vals[slot]
	}
	g.emit(id, op, g.vflg, site, g.addr(slot), val)
}

// sharedSite is one of the two read or write sites of non-racy shared
// variable v.
func (g *generator) sharedSite(v int32, write bool, u uint64) trace.SiteID {
	site := g.sShared + sitesPerVar*trace.SiteID(v-g.nRacy) + trace.SiteID(u&1)
	if write {
		site += 2
	}
	return site
}

// data writes one plain access of goroutine id.
func (g *generator) data(id int32, s *gstate) {
	if s.nVarLk > 0 && g.u32() < g.tProt {
		// A variable protected by a lock held: any held lock's variables.
		k := int32(g.intn(int(s.nVarLk)))
		for _, sc := range s.stack {
			if sc.kind == scopeFunc || g.lk[sc.obj].v1 == g.lk[sc.obj].v0 {
				continue
			}
			if k > 0 {
				k--
				continue
			}
			ls := &g.lk[sc.obj]
			v := ls.v0 + int32(g.intn(int(ls.v1-ls.v0)))
			u := g.u32()
			write := sc.kind == scopeLock && u >= g.tRead
			g.access(id, v, g.sharedSite(v, write, u), write)
			return
		}
	}
	if g.nHand > 0 && g.u32() < g.tHand && g.handoff(id, s) {
		return
	}
	if len(s.roles) > 0 && g.u32() < g.tRepeat {
		r := s.roles[g.intn(len(s.roles))]
		g.access(id, r.slot, r.site, r.write)
		return
	}
	u := g.u32()
	j := int32(g.intn(int(g.nLocals)))
	write := u >= g.tRead
	site := g.sLocal + sitesPerVar*trace.SiteID(j) + trace.SiteID(u&1)
	if write {
		site += 2
	}
	g.access(id, g.oLocal+id*g.nLocals+j, site, write)
}

// handoff takes one step on handed-off variables: access or send one it
// owns, or claim one that is free or in flight. It reports false (writing
// nothing) when it picked a variable owned by another goroutine.
func (g *generator) handoff(id int32, s *gstate) bool {
	if n := len(s.owned); n > 0 {
		i := g.intn(n)
		v := s.owned[i]
		if g.nSync > 0 && g.u32() < g.tSend {
			s.owned[i] = s.owned[n-1]
			s.owned = s.owned[:n-1]
			o := int32(g.intn(int(g.nSync)))
			g.hoOwner[v-g.nRacy] = hoInFlight
			g.hoChan[v-g.nRacy] = o
			g.emit(id, trace.OpSyncRelease, 0, g.sSync+sitesPerSync*trace.SiteID(o), g.addr(g.oSync+o), 0)
			return true
		}
		u := g.u32()
		write := u >= g.tRead
		g.access(id, v, g.sharedSite(v, write, u), write)
		return true
	}
	v := g.nRacy + int32(g.intn(int(g.nHand)))
	switch g.hoOwner[v-g.nRacy] {
	case hoFree:
		g.hoOwner[v-g.nRacy] = id
		s.owned = append(s.owned, v)
		u := g.u32()
		write := u >= g.tRead
		g.access(id, v, g.sharedSite(v, write, u), write)
	case hoInFlight:
		g.hoOwner[v-g.nRacy] = id
		s.owned = append(s.owned, v)
		o := g.hoChan[v-g.nRacy]
		g.emit(id, trace.OpSyncAcquire, 0, g.sSync+sitesPerSync*trace.SiteID(o)+1, g.addr(g.oSync+o), 0)
	default:
		return false
	}
	return true
}

// plant writes the next planted race with goroutine a (which has budget
// for one more access) first, if some other running goroutine can take the
// second access now. It reports whether it did.
func (g *generator) plant(aID int32, a *gstate) bool {
	n := len(g.run)
	start := g.intn(n)
	for i := range n {
		bID := g.run[(start+i)%n]
		if bID == aID {
			continue
		}
		b := &g.gs[bID]
		if b.status != running || b.budget <= int64(len(b.stack)) || shareLock(a, b) {
			continue
		}
		r := g.nextPlant
		s1, s2 := trace.SiteID(1+2*r), trace.SiteID(2+2*r)
		write2 := g.u32() >= g.tRead
		a.budget--
		a.done++
		b.budget--
		b.done++
		g.races = append(g.races, Race{
			Pair:        finding.MakePair(s1, s2),
			Obj:         g.addr(r),
			Name:        g.varName(r),
			First:       trace.GID(aID),
			Second:      trace.GID(bID),
			SecondWrite: write2,
			Seq:         g.seq,
		})
		g.access(aID, r, s1, true)
		g.access(bID, r, s2, write2)
		a.roles = append(a.roles, role{slot: r, site: s1, write: true})
		b.roles = append(b.roles, role{slot: r, site: s2, write: write2})
		g.nextPlant++
		if g.nextPlant == g.nRacy {
			g.plantAt = math.MaxUint64
		} else {
			g.plantAt = g.due(g.nextPlant)
		}
		return true
	}
	g.plantAt = g.seq + plantRetry
	return false
}
