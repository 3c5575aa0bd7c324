package trace

// Builder assembles a Trace by hand, naming goroutines, objects and sites
// the way a test wants to read them:
//
//	b := trace.NewBuilder()
//	b.Fork("T0", "T1", "s1")
//	b.Write("T0", "x", "s2")
//	b.Read("T1", "x", "s3")
//	tr := b.Trace()
//
// Goroutines get dense IDs in order of first mention; objects (variables,
// locks, sync objects, functions) share one ID space so that a name always
// means one object; sites are interned labels (see ParseSiteLabel).
type Builder struct {
	t    *Trace
	gids map[string]GID
	objs map[string]uint64
	seq  uint64
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{t: NewTrace(), gids: map[string]GID{}, objs: map[string]uint64{}}
}

// G returns the ID of the goroutine named name, defining it if new.
func (b *Builder) G(name string) GID {
	if g, ok := b.gids[name]; ok {
		return g
	}
	g := GID(len(b.gids))
	b.gids[name] = g
	_ = b.t.M.DefineGoroutine(Goroutine{ID: g, Parent: NoParent, Name: name})
	return g
}

// Obj returns the ID of the object named name, defining it if new. IDs
// start at 0x1000 and step by 8, like word addresses.
func (b *Builder) Obj(name string) uint64 {
	if o, ok := b.objs[name]; ok {
		return o
	}
	o := 0x1000 + 8*uint64(len(b.objs))
	b.objs[name] = o
	b.t.M.SetName(o, name)
	return o
}

// Site returns the ID of the site labelled label.
func (b *Builder) Site(label string) SiteID {
	if label == "" {
		return NoSite
	}
	return b.t.M.InternSite(ParseSiteLabel(label))
}

// Add appends a raw event (Seq is assigned) and returns its index.
func (b *Builder) Add(e Event) int {
	e.Seq = b.seq
	b.seq++
	if e.Flags&FlagGoAtomic != 0 {
		b.seq += GoAtomicSeqs - 1 // the Seqs of the events it stands for
	}
	b.t.Events = append(b.t.Events, e)
	return len(b.t.Events) - 1
}

func (b *Builder) op(g string, op Op, obj uint64, site string) int {
	return b.Add(Event{G: b.G(g), Op: op, Obj: obj, Site: b.Site(site), Flags: valueFlag(op)})
}

func valueFlag(op Op) Flags {
	if op.HasValue() {
		return FlagValueUnknown
	}
	return 0
}

// Read appends a read of variable x with an unknown value.
func (b *Builder) Read(g, x, site string) int { return b.op(g, OpRead, b.Obj(x), site) }

// Write appends a write of variable x with an unknown value.
func (b *Builder) Write(g, x, site string) int { return b.op(g, OpWrite, b.Obj(x), site) }

// ReadV appends a read of x that observed v.
func (b *Builder) ReadV(g, x string, v uint64, site string) int {
	return b.Add(Event{G: b.G(g), Op: OpRead, Obj: b.Obj(x), Value: v, Site: b.Site(site)})
}

// WriteV appends a write of v to x.
func (b *Builder) WriteV(g, x string, v uint64, site string) int {
	return b.Add(Event{G: b.G(g), Op: OpWrite, Obj: b.Obj(x), Value: v, Site: b.Site(site)})
}

// Acq appends an exclusive acquire of lock l.
func (b *Builder) Acq(g, l string) int { return b.op(g, OpAcquire, b.Obj(l), "") }

// Rel appends an exclusive release of lock l.
func (b *Builder) Rel(g, l string) int { return b.op(g, OpRelease, b.Obj(l), "") }

// RAcq appends a shared (read-mode) acquire of lock l.
func (b *Builder) RAcq(g, l string) int {
	return b.Add(Event{G: b.G(g), Op: OpAcquire, Obj: b.Obj(l), Flags: FlagReadLock})
}

// RRel appends a shared (read-mode) release of lock l.
func (b *Builder) RRel(g, l string) int {
	return b.Add(Event{G: b.G(g), Op: OpRelease, Obj: b.Obj(l), Flags: FlagReadLock})
}

// Fork appends parent's fork of child (defining child with its parent).
func (b *Builder) Fork(parent, child, site string) int {
	p := b.G(parent)
	if _, ok := b.gids[child]; !ok {
		c := GID(len(b.gids))
		b.gids[child] = c
		_ = b.t.M.DefineGoroutine(Goroutine{ID: c, Parent: p, Site: b.Site(site), Name: child})
	}
	return b.Add(Event{G: p, Op: OpFork, Obj: uint64(b.gids[child]), Site: b.Site(site)})
}

// Join appends parent's join of child.
func (b *Builder) Join(parent, child string) int {
	return b.Add(Event{G: b.G(parent), Op: OpJoin, Obj: uint64(b.G(child))})
}

// Begin and End append a goroutine's first and last event.
func (b *Builder) Begin(g string) int { return b.Add(Event{G: b.G(g), Op: OpBegin}) }
func (b *Builder) End(g string) int   { return b.Add(Event{G: b.G(g), Op: OpEnd}) }

// Snd and Rcv append a release / acquire on sync object o.
func (b *Builder) Snd(g, o string) int { return b.op(g, OpSyncRelease, b.Obj(o), "") }
func (b *Builder) Rcv(g, o string) int { return b.op(g, OpSyncAcquire, b.Obj(o), "") }

// ALoad, AStore and ARMW append atomic operations on word a.
func (b *Builder) ALoad(g, a string) int  { return b.op(g, OpAtomicLoad, b.Obj(a), "") }
func (b *Builder) AStore(g, a string) int { return b.op(g, OpAtomicStore, b.Obj(a), "") }
func (b *Builder) ARMW(g, a string) int   { return b.op(g, OpAtomicRMW, b.Obj(a), "") }

// GoAtomic appends what the Go front end records for atomic operation op
// (OpAtomicLoad, OpAtomicStore or OpAtomicRMW) on word a at site: an
// acquire of the word's private lock (AtomicLockBit), the operation, a
// data access of a (a read for a load, else a write), the lock's release.
// It returns the data access's index.
func (b *Builder) GoAtomic(g string, op Op, a, site string) int {
	var out [GoAtomicSeqs]Event
	GoAtomicEvents(&Event{G: b.G(g), Op: op, Flags: FlagGoAtomic, Obj: b.Obj(a), Site: b.Site(site)}, &out)
	i := 0
	for j, e := range out {
		if j == 2 {
			i = len(b.t.Events)
		}
		b.Add(e)
	}
	return i
}

// Call appends a BarrierPair begin for untraced method m reaching addrs.
func (b *Builder) Call(g, m string, addrs ...string) int {
	e := Event{G: b.G(g), Op: OpMethodBegin, Obj: b.Obj(m)}
	for _, a := range addrs {
		e.Addrs = append(e.Addrs, b.Obj(a))
	}
	return b.Add(e)
}

// Ret appends the matching BarrierPair end.
func (b *Builder) Ret(g, m string) int { return b.op(g, OpMethodEnd, b.Obj(m), "") }

// Alloc appends an allocation by g of size bytes at object x's address: x
// is a new object from here on.
func (b *Builder) Alloc(g, x string, size uint64) int {
	return b.Add(Event{G: b.G(g), Op: OpAlloc, Obj: b.Obj(x), Value: size})
}

// Enter and Exit append function boundaries.
func (b *Builder) Enter(g, f string) int { return b.op(g, OpFuncEnter, b.Obj(f), "") }
func (b *Builder) Exit(g, f string) int  { return b.op(g, OpFuncExit, b.Obj(f), "") }

// Trace returns the trace built so far (shared, not copied).
func (b *Builder) Trace() *Trace { return b.t }
