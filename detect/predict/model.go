package predict

import (
	"slices"

	"github.com/racekit/racekit/trace"
)

// memKey names one memory word of the model: plain accesses and atomic
// operations live in separate spaces (docs/semantics.md: atomics are
// synchronization, never data accesses).
type memKey struct {
	addr   uint64
	atomic bool
}

// valKind says what is known of a value.
type valKind uint8

const (
	valNone  valKind = iota // nothing: no known-value read may see it
	valKnown                // the value v
	valWild                 // some value not recorded: any known-value read may see it
)

// val is the value a write left (or a word's value at the start of a
// stretch of the trace).
type val struct {
	kind valKind
	v    uint64
}

// compatible reports whether a read that observed v may read x.
func (x val) compatible(v uint64) bool {
	return x.kind == valWild || (x.kind == valKnown && x.v == v)
}

// Read modes: how a read is constrained (Algorithm 10, generalized).
const (
	readFree   uint8 = iota // no constraint: not a read
	readValue               // must see a write (or initial value) compatible with its value
	readWriter              // must see its observed writer: reads of unknown value and read-modify-writes
)

// heldLock is a lock a goroutine holds.
type heldLock struct {
	obj  uint64
	read bool
}

// openBP is a BarrierPair whose MethodBegin has been seen and whose
// MethodEnd has not.
type openBP struct {
	d map[uint64]bool // D: its reachable addresses
}

// prefix is what happened before a stretch of the trace (a window): the
// part that every reordering of the stretch keeps as observed. The zero
// prefix (newPrefix) is the start of the trace.
type prefix struct {
	events int                // events before the stretch
	count  map[trace.GID]int  // events of each goroutine before the stretch
	forked map[trace.GID]bool // goroutines forked, by a traced fork, before the stretch
	held   map[trace.GID][]heldLock
	open   map[trace.GID][]openBP
	mem    map[memKey]memVal // value of each word (only words written, or read with a known value)
	// Allocs before the stretch: for each byte of an object up to
	// smallAlloc bytes, the index of the latest Alloc covering it (+1)
	// per 8-byte word; the larger ones in order. value() looked through
	// every Alloc of the prefix for a word never written: quadratic in
	// Go's TestNoRaceTinyAlloc (millions of one-byte objects).
	allocAt map[uint64]*[8]int
	bigs    []allocRec
	rdit    bool // BarrierPairs' hidden code may write the words of D
}

// smallAlloc bounds the objects whose bytes allocAt indexes.
const smallAlloc = 4096

type memVal struct {
	val
	at int // index (in the whole trace) of the event that set it
}

type allocRec struct {
	lo, hi uint64
	at     int
}

func newPrefix() *prefix {
	return &prefix{
		count:  map[trace.GID]int{},
		forked: map[trace.GID]bool{},
		held:   map[trace.GID][]heldLock{},
		open:   map[trace.GID][]openBP{},
		mem:    map[memKey]memVal{},
	}
}

// value is the value of k after the prefix: the last write's (an Alloc
// writes zero: Go zeroes fresh memory), or the initial value when a read
// with a known value saw it before any write, or valNone.
func (p *prefix) value(k memKey) val {
	m, ok := p.mem[k]
	at := -1
	if ok {
		at = m.at
	}
	if w := p.allocAt[k.addr>>3]; w != nil && w[k.addr&7]-1 > at {
		return val{kind: valKnown}
	}
	for i := len(p.bigs) - 1; i >= 0 && p.bigs[i].at > at; i-- {
		if a := p.bigs[i]; k.addr >= a.lo && k.addr < a.hi {
			return val{kind: valKnown}
		}
	}
	if ok {
		return m.val
	}
	return val{}
}

// addAlloc records an Alloc of [lo, hi) at index at.
func (p *prefix) addAlloc(lo, hi uint64, at int) {
	if hi-lo > smallAlloc {
		p.bigs = append(p.bigs, allocRec{lo, hi, at})
		return
	}
	if p.allocAt == nil {
		p.allocAt = map[uint64]*[8]int{}
	}
	for a := lo; a < hi; {
		w := p.allocAt[a>>3]
		if w == nil {
			w = new([8]int)
			p.allocAt[a>>3] = w
		}
		for next := (a | 7) + 1; a < hi && a < next; a++ {
			w[a&7] = at + 1 // the bytes of this word in the range
		}
	}
}

// advance applies e (the next event of the trace) to the prefix.
func (p *prefix) advance(e *trace.Event) {
	at := p.events
	p.events++
	p.count[e.G]++
	switch e.Op {
	case trace.OpFork:
		p.forked[e.Child()] = true
	case trace.OpAcquire:
		p.held[e.G] = append(p.held[e.G], heldLock{e.Obj, e.ReadLock()})
	case trace.OpRelease:
		h := p.held[e.G]
		for i := len(h) - 1; i >= 0; i-- {
			if h[i].obj == e.Obj {
				p.held[e.G] = slices.Delete(h, i, i+1)
				break
			}
		}
	case trace.OpMethodBegin:
		p.open[e.G] = append(p.open[e.G], openBP{d: addrSet(e.Addrs)})
	}
	switch e.Op {
	case trace.OpAlloc:
		if lo, hi, ok := e.AllocRange(); ok {
			p.addAlloc(lo, hi, at)
		}
	}
	if k, ok := writeKey(e); ok {
		p.mem[k] = memVal{writeVal(e), at}
	} else if k, ok := readKey(e); ok && e.ValueKnown() && p.value(k).kind == valNone {
		// A read with a known value of a word never written: the initial value.
		p.mem[k] = memVal{val{valKnown, e.Value}, at}
	}
	if p.rdit {
		// Every event of an open BarrierPair's span (Begin to End) may be
		// where its hidden code wrote the words of D (model.hiddenWrites).
		for _, o := range p.open[e.G] {
			for a := range o.d {
				p.mem[memKey{a, false}] = memVal{val{kind: valWild}, at}
				p.mem[memKey{a, true}] = memVal{val{kind: valWild}, at}
			}
		}
	}
	if e.Op == trace.OpMethodEnd {
		if o := p.open[e.G]; len(o) > 0 {
			p.open[e.G] = o[:len(o)-1]
		}
	}
}

func addrSet(as []uint64) map[uint64]bool {
	m := make(map[uint64]bool, len(as))
	for _, a := range as {
		m[a] = true
	}
	return m
}

// writeKey returns the word a write (plain or atomic, including the write
// half of a read-modify-write) sets.
func writeKey(e *trace.Event) (memKey, bool) {
	switch e.Op {
	case trace.OpWrite:
		return memKey{e.Obj, false}, true
	case trace.OpAtomicStore, trace.OpAtomicRMW:
		return memKey{e.Obj, true}, true
	}
	return memKey{}, false
}

func writeVal(e *trace.Event) val {
	if e.ValueKnown() {
		return val{valKnown, e.Value}
	}
	return val{kind: valWild}
}

// readKey returns the word a read (plain or atomic) reads.
func readKey(e *trace.Event) (memKey, bool) {
	switch e.Op {
	case trace.OpRead:
		return memKey{e.Obj, false}, true
	case trace.OpAtomicLoad, trace.OpAtomicRMW:
		return memKey{e.Obj, true}, true
	}
	return memKey{}, false
}

// readMode is how a read constrains the reorderings (Algorithm 10, with
// racekit's events). A read of known value v (plain, or an atomic load:
// Go's sync/atomic values are recorded) must see a write of v (or of a
// value not recorded) with no other write in between, or the initial value
// if that is v. A read of unknown value must see the very write it saw in
// the trace: the maximal causal model lets a read see another write only
// when it returns the same value (thesis 4.4.1, read consistency), and with
// the value unknown the observed write is the one write known to give it.
// The Go front end records plain accesses without values, so this is the
// rule for them: letting such a read see any write predicted races on
// correct code (a value published under a lock and read after a flag set
// under it, TestNoPredictionThroughAFlagPublishedUnderALock). Every
// read-modify-write (whose recorded value is sometimes the old and
// sometimes the new one) must see its observed write too.
func readMode(e *trace.Event) uint8 {
	switch e.Op {
	case trace.OpRead, trace.OpAtomicLoad:
		if e.ValueKnown() {
			return readValue
		}
		return readWriter
	case trace.OpAtomicRMW:
		return readWriter
	}
	return readFree
}

// section is a critical section of one lock within a stretch: indices of
// its acquire and release in the stretch, -1 when the acquire was before
// the stretch (held at its start) or the release after it (held at its
// end).
type section struct {
	acq, rel int32
	g        int32
	read     bool
}

// readInfo is the read-consistency obligation of one event.
type readInfo struct {
	ev     int32
	key    memKey
	mode   uint8
	v      uint64 // readValue: the value observed
	writer int32  // readWriter: the observed writer in the stretch, -1 for the value at its start
	// after lists events that must precede the read when it runs (rdit:
	// what hidden code feeding it may have waited for, pinHiddenReads).
	// Unlike preds they do not hold when the read is only enabled: a racing
	// access need not see a consistent value.
	after []int32
}

// bpInfo is a BarrierPair within a stretch.
type bpInfo struct {
	g          int32
	begin, end int32 // -1: before / after the stretch
	d          map[uint64]bool
}

// model is the structure of a stretch of the trace that every encoding and
// check needs: goroutines, hard edges (the ones no reordering may break),
// critical sections, read obligations, and each word's writes.
type model struct {
	ev    []trace.Event
	gid   []trace.GID // dense goroutine index → GID
	g     []int32     // per event: dense goroutine
	gIdx  []int       // per event: index among its goroutine's events in the whole trace
	byG   [][]int32   // per dense goroutine: its events, in order
	prev  []int32     // per event: previous event of the goroutine in the stretch, -1 none
	local []int32     // per event: its index in byG[g]

	// preds holds, per event, its hard-edge predecessors other than
	// program order (fork, join, untraced birth, snd/rcv, alloc, and
	// for rdit the BarrierPair linearization), all earlier in the stretch.
	preds [][]int32

	sections map[uint64][]section
	locks    [][]heldLock // per event: locks its goroutine holds at it (shared slices)
	reads    []readInfo
	writes   map[memKey][]int32 // per word: its writes in the stretch (Allocs included), in order
	wval     map[int32]val      // value of each write (an Alloc writes zero)
	init     map[memKey]val     // each word's value at the start of the stretch
	bps      []bpInfo

	illformed int
}

// buildModel analyzes evs, which follow the prefix p. With rdit, the
// BarrierPairs' linearization edges (Algorithms 5 and 6) are hard edges;
// without it (mcm) MethodBegin/MethodEnd order nothing.
func buildModel(evs []trace.Event, p *prefix, rdit bool) *model {
	b := newModelBuilder(evs, p)
	for i := range evs {
		b.addEvent(i)
	}
	b.addForkEdges()
	b.closeOpenSections()
	b.addAllocs()
	m := b.m
	m.addReadObligations(p)
	if rdit {
		m.linearizeBarrierPairs()
		m.pinHiddenReads(p)
	}
	return m
}

// modelBuilder is buildModel's state while it walks the stretch in trace
// order.
type modelBuilder struct {
	m          *model
	p          *prefix
	dense      map[trace.GID]int32
	lastOf     []int32              // per dense goroutine: its last event so far
	held       [][]heldLock         // per dense goroutine: held locks (copy on write)
	openAcq    []map[uint64][]int32 // per dense goroutine: open acquires per lock (stack)
	openBPs    [][]int              // per dense goroutine: indices into m.bps of open BarrierPairs
	lastSnd    map[uint64]map[int32]int32
	allocs     []int32
	forkedHere map[trace.GID]bool
	keysSeen   map[memKey]bool
	sendBack   sendBacks
}

func newModelBuilder(evs []trace.Event, p *prefix) *modelBuilder {
	n := len(evs)
	m := &model{
		ev: evs, g: make([]int32, n), gIdx: make([]int, n), prev: make([]int32, n), local: make([]int32, n),
		preds: make([][]int32, n), sections: map[uint64][]section{}, locks: make([][]heldLock, n),
		writes: map[memKey][]int32{}, wval: map[int32]val{}, init: map[memKey]val{},
	}
	return &modelBuilder{
		m: m, p: p, dense: map[trace.GID]int32{}, lastOf: []int32{}, held: [][]heldLock{},
		openAcq: []map[uint64][]int32{}, openBPs: [][]int{}, lastSnd: map[uint64]map[int32]int32{},
		forkedHere: map[trace.GID]bool{}, keysSeen: map[memKey]bool{}, sendBack: chanBackEdges(evs),
	}
}

// addEvent places event i in its goroutine's program order and records
// what it synchronizes, locks, opens or closes, and accesses.
func (b *modelBuilder) addEvent(i int) {
	m := b.m
	e := &m.ev[i]
	g, ok := b.dense[e.G]
	if !ok {
		g = b.addGoroutine(i, e.G)
	}
	m.g[i] = g
	m.gIdx[i] = b.p.count[e.G] + len(m.byG[g])
	m.prev[i] = b.lastOf[g]
	m.local[i] = int32(len(m.byG[g]))
	m.byG[g] = append(m.byG[g], int32(i))
	b.lastOf[g] = int32(i)
	m.locks[i] = b.held[g]
	switch e.Op {
	case trace.OpFork:
		// The edge to the child's first event is added by addForkEdges.
		b.forkedHere[e.Child()] = true
	case trace.OpJoin:
		if c, ok := b.dense[e.Child()]; ok && b.lastOf[c] >= 0 {
			m.preds[i] = append(m.preds[i], b.lastOf[c])
		}
	case trace.OpSyncRelease:
		if b.lastSnd[e.Obj] == nil {
			b.lastSnd[e.Obj] = map[int32]int32{}
		}
		b.lastSnd[e.Obj][g] = int32(i)
	case trace.OpSyncAcquire:
		b.addReceiveEdges(i, g)
	case trace.OpAcquire:
		b.held[g] = append(slices.Clip(b.held[g]), heldLock{e.Obj, e.ReadLock()})
		b.openAcq[g][e.Obj] = append(b.openAcq[g][e.Obj], int32(i))
	case trace.OpRelease:
		b.closeSection(i, g)
	case trace.OpMethodBegin:
		b.openBPs[g] = append(b.openBPs[g], len(m.bps))
		m.bps = append(m.bps, bpInfo{g: g, begin: int32(i), end: -1, d: addrSet(e.Addrs)})
	case trace.OpMethodEnd:
		if o := b.openBPs[g]; len(o) > 0 {
			m.bps[o[len(o)-1]].end = int32(i)
			b.openBPs[g] = o[:len(o)-1]
		} else {
			m.illformed++
		}
	case trace.OpAlloc:
		b.allocs = append(b.allocs, int32(i))
	}
	if k, ok := writeKey(e); ok {
		m.writes[k] = append(m.writes[k], int32(i))
		m.wval[int32(i)] = writeVal(e)
		b.keysSeen[k] = true
	}
	if k, ok := readKey(e); ok {
		b.keysSeen[k] = true
	}
}

// addGoroutine gives goroutine gid, whose first event in the stretch is
// i, its dense index, with the locks and BarrierPairs it holds open from
// the prefix, and returns the index.
func (b *modelBuilder) addGoroutine(i int, gid trace.GID) int32 {
	m, p := b.m, b.p
	g := int32(len(m.gid))
	b.dense[gid] = g
	m.gid = append(m.gid, gid)
	m.byG = append(m.byG, nil)
	b.lastOf = append(b.lastOf, -1)
	h := slices.Clone(p.held[gid])
	b.held = append(b.held, h)
	oa := map[uint64][]int32{}
	for _, l := range h {
		oa[l.obj] = append(oa[l.obj], -1)
	}
	b.openAcq = append(b.openAcq, oa)
	var obs []int
	for _, o := range p.open[gid] {
		obs = append(obs, len(m.bps))
		m.bps = append(m.bps, bpInfo{g: g, begin: -1, end: -1, d: o.d})
	}
	b.openBPs = append(b.openBPs, obs)
	if p.count[gid] == 0 && !p.forked[gid] && !b.forkedHere[gid] {
		// Born in untraced code (docs/semantics.md): after everything
		// observed so far.
		for _, l := range b.lastOf {
			if l >= 0 {
				m.preds[i] = append(m.preds[i], l)
			}
		}
	}
	return g
}

// addReceiveEdges adds the hard edges into event i, a SyncAcquire of dense
// goroutine g.
func (b *modelBuilder) addReceiveEdges(i int, g int32) {
	m, e := b.m, &b.m.ev[i]
	if backs, ok := b.sendBack[int32(i)]; ok {
		// A send's completion: the receives the memory model
		// orders before it (chanmsg.go).
		m.preds[i] = append(m.preds[i], backs...)
		return
	}
	// Every earlier send of the object (release-merge, as hb): the
	// latest of each goroutine stands for its earlier ones.
	for sg, s := range b.lastSnd[e.Obj] {
		if sg != g {
			m.preds[i] = append(m.preds[i], s)
		}
	}
}

// closeSection ends, at event i (a Release of dense goroutine g), the
// critical section of the innermost open acquire of its lock.
func (b *modelBuilder) closeSection(i int, g int32) {
	m, e := b.m, &b.m.ev[i]
	h := b.held[g]
	j := len(h) - 1
	for j >= 0 && h[j].obj != e.Obj {
		j--
	}
	st := b.openAcq[g][e.Obj]
	if j < 0 || len(st) == 0 {
		m.illformed++ // a release of a lock not held: no section
		return
	}
	b.held[g] = slices.Delete(slices.Clone(h), j, j+1)
	m.sections[e.Obj] = append(m.sections[e.Obj], section{acq: st[len(st)-1], rel: int32(i), g: g, read: h[j].read})
	b.openAcq[g][e.Obj] = st[:len(st)-1]
}

// addForkEdges adds the fork edges: the fork precedes the child's first
// event in the stretch.
func (b *modelBuilder) addForkEdges() {
	m := b.m
	for i := range m.ev {
		if e := &m.ev[i]; e.Op == trace.OpFork {
			if c, ok := b.dense[e.Child()]; ok {
				if f := m.byG[c][0]; f > int32(i) {
					m.preds[f] = append(m.preds[f], int32(i))
				}
			}
		}
	}
}

// closeOpenSections records the critical sections still open at the end
// of the stretch.
func (b *modelBuilder) closeOpenSections() {
	m := b.m
	for g := range b.openAcq {
		for l, st := range b.openAcq[g] {
			for _, a := range st {
				read := false
				for _, h := range b.held[g] {
					if h.obj == l {
						read = h.read
					}
				}
				m.sections[l] = append(m.sections[l], section{acq: a, rel: -1, g: int32(g), read: read})
			}
		}
	}
}

// addAllocs makes each Alloc a write of zero to every word of its range
// used in the stretch, linearized with every access to those words (the
// old object's accesses come before, the new one's after).
func (b *modelBuilder) addAllocs() {
	if len(b.allocs) == 0 {
		return
	}
	keys := sortedKeys(b.keysSeen)
	b.addAllocWrites(keys)
	b.linearizeAllocs(keys)
}

// sortedKeys returns the words of set by address, the plain one first.
func sortedKeys(set map[memKey]bool) []memKey {
	keys := make([]memKey, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b memKey) int {
		if a.addr != b.addr {
			if a.addr < b.addr {
				return -1
			}
			return 1
		}
		if a.atomic == b.atomic {
			return 0
		}
		if !a.atomic {
			return -1
		}
		return 1
	})
	return keys
}

// addAllocWrites inserts each Alloc, in trace order, among the writes of
// the words of keys (sorted) in its range.
func (b *modelBuilder) addAllocWrites(keys []memKey) {
	m := b.m
	for _, ai := range b.allocs {
		lo, hi, ok := m.ev[ai].AllocRange()
		if !ok {
			continue
		}
		j := firstKeyAt(keys, lo)
		for ; j < len(keys) && keys[j].addr < hi; j++ {
			k := keys[j]
			ws := m.writes[k]
			at, _ := slices.BinarySearch(ws, ai)
			m.writes[k] = slices.Insert(ws, at, ai)
			m.wval[ai] = val{kind: valKnown}
		}
	}
}

// linearizeAllocs linearizes each Alloc with the accesses of other
// goroutines to its range.
func (b *modelBuilder) linearizeAllocs(keys []memKey) {
	m := b.m
	byAddr := map[uint64][]int32{}
	for i := range m.ev {
		if e := &m.ev[i]; e.Op.IsAccess() || e.Op.IsAtomic() {
			byAddr[e.Obj] = append(byAddr[e.Obj], int32(i))
		}
	}
	for _, ai := range b.allocs {
		lo, hi, ok := m.ev[ai].AllocRange()
		if !ok {
			continue
		}
		// The keys in [lo, hi) only: scanning every key per alloc was
		// quadratic (Go's TestNoRaceTinyAlloc: millions of allocs).
		j0 := firstKeyAt(keys, lo)
		for j := j0; j < len(keys) && keys[j].addr < hi; j++ {
			k := keys[j]
			if j > j0 && keys[j-1].addr == k.addr {
				continue
			}
			for _, x := range byAddr[k.addr] {
				if m.g[x] == m.g[ai] {
					continue
				}
				if x < ai {
					m.preds[ai] = append(m.preds[ai], x)
				} else {
					m.preds[x] = append(m.preds[x], ai)
				}
			}
		}
	}
}

// addReadObligations records each word's value at the start of the
// stretch (p's, or the first observation of it) and the read-consistency
// obligation of each read, with its observed writer (Allocs included:
// addAllocs comes first).
func (m *model) addReadObligations(p *prefix) {
	for i := range m.ev {
		e := &m.ev[i]
		k, ok := readKey(e)
		if !ok {
			continue
		}
		if _, ok := m.init[k]; !ok {
			m.init[k] = p.value(k)
		}
		mode := readMode(e)
		if mode == readFree {
			continue
		}
		ri := readInfo{ev: int32(i), key: k, mode: mode, v: e.Value, writer: -1}
		ws := m.writes[k]
		at, _ := slices.BinarySearch(ws, int32(i))
		if mode == readValue && at == 0 && m.init[k].kind == valNone {
			// The first observation of the word's initial value.
			m.init[k] = val{valKnown, e.Value}
		}
		if at > 0 {
			ri.writer = ws[at-1]
		}
		m.reads = append(m.reads, ri)
	}
}

// pinHiddenReads keeps reads that untraced code may have fed as observed
// (rdit). A BarrierPair's hidden code may write the words of its D at any
// moment between its MethodBegin and its MethodEnd (thesis 4.4.1: the
// missing events "can perform arbitrary operations on any objects in D"),
// also between two of its observed events and while its goroutine shows
// nothing at all. So when a BarrierPair reaching the word of a read (of
// known value; one of unknown value sees its observed write already)
// began before the read and ended after the read's observed
// write (or is still open), the value the read saw may be the hidden
// code's, which no other program producing the trace need repeat
// elsewhere: the read must see its observed write, with the hidden write
// in between as observed. The same holds for a read whose word a
// BarrierPair before the window may have written (prefix.value is then
// valWild).
//
// Where that hidden write happened matters. If the BarrierPair ended
// before the read, or the read is one of its own goroutine's events, the
// BarrierPair's linearization with the events on its D (and program
// order) keeps everything the hidden code could have waited for before
// the read. If the read lies inside the BarrierPair of another goroutine,
// the hidden write may have come just before it, after waiting for any
// event observed before the read (through D, or through other
// BarrierPairs), and the reads of the word that saw the value before it
// must stay before it: so such a read, when it runs, follows every event
// observed before it (readInfo.after: each goroutine's last earlier
// event). Without that, hidden code that waits for a write of one
// goroutine and then sets the word another goroutine reads would let the
// reader's later events race with the writer's earlier ones
// (TestRDITHiddenWriteInsideGap). As a racing access (enabled, not run)
// the read needs none of it.
func (m *model) pinHiddenReads(p *prefix) {
	byAddr := map[uint64][]int{}
	for i := range m.bps {
		for a := range m.bps[i].d {
			byAddr[a] = append(byAddr[a], i)
		}
	}
	late := map[int32]int{} // pinned reads inside another goroutine's BarrierPair → index in m.reads
	for j := range m.reads {
		ri := &m.reads[j]
		if ri.mode == readFree {
			continue
		}
		r := ri.ev
		pin := ri.writer < 0 && p.value(ri.key).kind == valWild
		for _, bi := range byAddr[ri.key.addr] {
			b := &m.bps[bi]
			if b.begin >= r || (b.end >= 0 && b.end < ri.writer) {
				continue // began after the read, or ended before its write
			}
			pin = true
			if b.g != m.g[r] && (b.end < 0 || b.end > r) {
				late[r] = j
			}
		}
		if pin {
			ri.mode = readWriter
		}
	}
	if len(late) == 0 {
		return
	}
	lastOf := make([]int32, len(m.byG))
	for g := range lastOf {
		lastOf[g] = -1
	}
	for i := range int32(len(m.ev)) {
		g := m.g[i]
		if j, ok := late[i]; ok {
			for h, l := range lastOf {
				if int32(h) != g && l >= 0 {
					m.reads[j].after = append(m.reads[j].after, l)
				}
			}
		}
		lastOf[g] = i
	}
}

// syncObjectOp reports whether e is an event on an object that untraced
// code reaching the object could synchronize with: data and atomic
// accesses (Algorithm 5 linearizes a BarrierPair with the reads and writes
// of the addresses in D), and, as a generalization for Go, lock and sync
// object operations, since untraced code handed a mutex or a channel can
// lock it or send on it.
func syncObjectOp(op trace.Op) bool {
	switch op {
	case trace.OpRead, trace.OpWrite, trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW,
		trace.OpAcquire, trace.OpRelease, trace.OpSyncRelease, trace.OpSyncAcquire:
		return true
	}
	return false
}

// bpSpan returns the events of BarrierPair b in the stretch: MethodBegin,
// the Between events and MethodEnd (thesis 4.2), bounded by the stretch.
func (m *model) bpSpan(b *bpInfo) []int32 {
	evs := m.byG[b.g]
	lo, hi := 0, len(evs)
	if b.begin >= 0 {
		lo, _ = slices.BinarySearch(evs, b.begin)
	}
	if b.end >= 0 {
		hi, _ = slices.BinarySearch(evs, b.end)
		hi++
	}
	return evs[lo:hi]
}

// linearizeBarrierPairs adds Algorithm 5's constraints as hard edges: two
// BarrierPairs of different goroutines whose D intersect are linearized
// with their Between events in trace order (Algorithm 6: each change of
// goroutine along the merged sequence is an edge), and so is each
// BarrierPair with every event on an address of its D. The hidden events
// of a BarrierPair may be anywhere inside it and may synchronize with
// anything reaching the same addresses (Caveats 1-3); Caveat 4's
// transitivity comes from the solver's order. Within one goroutine,
// program order says it all already.
func (m *model) linearizeBarrierPairs() {
	if len(m.bps) == 0 {
		return
	}
	edge := func(a, b int32) { m.preds[b] = append(m.preds[b], a) }
	spans := make([][]int32, len(m.bps))
	for i := range m.bps {
		spans[i] = m.bpSpan(&m.bps[i])
	}
	for i := range m.bps {
		for j := i + 1; j < len(m.bps); j++ {
			bi, bj := &m.bps[i], &m.bps[j]
			if bi.g == bj.g || !intersects(bi.d, bj.d) {
				continue
			}
			s, t := spans[i], spans[j]
			var last int32 = -1
			lastG := int32(-1)
			for len(s) > 0 || len(t) > 0 {
				var x int32
				if len(t) == 0 || (len(s) > 0 && s[0] < t[0]) {
					x, s = s[0], s[1:]
				} else {
					x, t = t[0], t[1:]
				}
				if last >= 0 && m.g[x] != lastG {
					edge(last, x)
				}
				last, lastG = x, m.g[x]
			}
		}
	}
	byObj := map[uint64][]int32{}
	for i := range m.ev {
		if e := &m.ev[i]; syncObjectOp(e.Op) {
			byObj[e.Obj] = append(byObj[e.Obj], int32(i))
		}
	}
	for i := range m.bps {
		b := &m.bps[i]
		span := spans[i]
		for a := range b.d {
			for _, x := range byObj[a] {
				if m.g[x] == b.g {
					continue
				}
				// Linearize x with the span: its neighbours in the span (by
				// trace order) come before and after it.
				k, _ := slices.BinarySearch(span, x)
				if k > 0 {
					edge(span[k-1], x)
				}
				if k < len(span) {
					edge(x, span[k])
				}
			}
		}
	}
}

func intersects(a, b map[uint64]bool) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for x := range a {
		if b[x] {
			return true
		}
	}
	return false
}

// firstKeyAt is the index of the first of keys (sorted by address) at or
// above addr.
func firstKeyAt(keys []memKey, addr uint64) int {
	j, _ := slices.BinarySearchFunc(keys, addr, func(k memKey, a uint64) int {
		if k.addr < a {
			return -1
		}
		if k.addr > a {
			return 1
		}
		return 0
	})
	return j
}
