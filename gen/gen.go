// Package gen writes seeded synthetic traces with a known answer: the
// generator behind `racekit gen`. Every trace comes with a Truth listing the
// races planted in it, so detectors, filters and codecs can be checked
// against ground truth on traces of any size.
//
// # What a trace contains
//
// Goroutine 0 ("main") runs first; the others are forked and joined according
// to Config.Shape. Between its Begin and its End (and around its forks and
// joins) each goroutine performs work steps, chosen at random:
//
//   - lock acquisitions, nested up to Config.Nesting deep and released in
//     LIFO order, in write or read (RWMutex) mode;
//   - function enter/exit pairs, nested up to Config.FuncDepth deep (function
//     frames and critical sections nest properly with each other);
//   - atomic loads, stores and read-modify-writes on Config.AtomicVars words;
//   - snd/rcv (SyncRelease/SyncAcquire) on Config.SyncObjs sync objects;
//   - plain reads and writes, to variables of four kinds:
//
// Lock-protected variables (lockset-clean). The shared variables that are
// neither racy nor handed off are split among the locks; each is accessed
// only by a goroutine holding its lock: writes in write mode, reads in either
// mode. Under happens-before they are ordered by the lock's release→acquire
// edges; under a lockset check every conflicting pair shares that lock, held
// in write mode by the writer.
//
// Locals (lockset-clean). Each goroutine owns Config.Locals private
// variables that no other goroutine touches.
//
// Handed-off variables (happens-before clean, NOT lockset-clean). A share
// Config.HandoffFraction of the shared variables is owned by one goroutine at
// a time and passed on: the owner sends it with a snd on a sync object and a
// later rcv on that object makes the receiver the owner; a parent that joins
// a child inherits what the child owned. Only the owner accesses it, so every
// access happens after the previous owner's, but without a common lock: a
// pairwise lockset check flags such pairs (Truth.LocksetExact is false).
//
// Racy variables. A share Config.RacyFraction of the shared variables each
// carries one planted race on two dedicated sites: goroutine A writes the
// variable at site s1 and, as the very next event of the trace, goroutine
// B≠A reads or writes it at site s2, while A and B hold no common lock (in
// any mode). Nothing can happen-before-order two adjacent events of different
// goroutines, so the pair is a race under any precise detector. Afterwards A
// may repeat its write at s1 and B its access at s2 (Config.RepeatFraction);
// no other site ever touches the variable, so the variable contributes
// exactly the pair {s1, s2}.
//
// Extra synchronization (atomics, snd/rcv without data, locks held without
// accessing anything) only adds happens-before edges, which can hide no
// planted race (the adjacent occurrence stays unordered) and create none.
// Hence the contract that the tests check with a reference checker:
//
//   - the distinct site pairs racing under precise happens-before are exactly
//     Truth.Pairs();
//   - with Truth.LocksetExact (no handed-off variables), a pairwise lockset
//     check (every conflicting pair of accesses by different goroutines must
//     share a lock held in write mode by at least one of them) flags exactly
//     Truth.Pairs() too; so RacyFraction == 0 and HandoffFraction == 0 give a
//     trace that is race-free under both.
//
// # Well-formedness and size
//
// Every goroutine Begins, runs, releases everything it holds, and Ends; a
// parent joins a child only after the child's End; Seq runs 0, 1, 2, ...
// The trace holds exactly Config.Events events: the budget left after the
// structural events (Begin and End of each goroutine, Fork and Join of each
// non-main goroutine: 4·Goroutines−2 in all) is split among the goroutines
// as work steps, and a goroutine never opens a lock or frame it would lack
// the budget to close, so no tail is needed. Config.Events below
// MinEvents(Goroutines) is an error.
//
// Generation streams: memory is proportional to the number of goroutines,
// variables and sites, not to Events. The same Config always yields the
// same byte-identical stream (randomness comes from a PCG seeded by
// Config.Seed; no map is iterated).
package gen

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Shape is how goroutines are forked and joined.
type Shape uint8

const (
	// Flat: main forks every worker up front and joins them all at the end.
	Flat Shape = iota
	// Tree: goroutine i forks goroutines 2i+1 and 2i+2 (when they exist)
	// during the first half of its work and joins them at its end.
	Tree
	// Chain: goroutine i forks goroutine i+1 during the first half of its
	// work and joins it at its end.
	Chain
	// Waves: main forks a batch of Config.WaveSize workers, joins them all,
	// forks the next batch, and so on.
	Waves

	numShapes
)

var shapeNames = [...]string{"flat", "tree", "chain", "waves"}

// Shapes lists every shape.
func Shapes() []Shape { return []Shape{Flat, Tree, Chain, Waves} }

func (s Shape) String() string {
	if s < numShapes {
		return shapeNames[s]
	}
	return fmt.Sprintf("shape(%d)", uint8(s))
}

// ParseShape returns the shape with the given name.
func ParseShape(name string) (Shape, error) {
	for i, n := range shapeNames {
		if strings.EqualFold(n, name) {
			return Shape(i), nil
		}
	}
	return 0, fmt.Errorf("gen: unknown shape %q (want one of %s)", name, strings.Join(shapeNames[:], ", "))
}

// MarshalText writes the shape's name (so Config and Truth read well as JSON).
func (s Shape) MarshalText() ([]byte, error) {
	if s >= numShapes {
		return nil, fmt.Errorf("gen: invalid shape %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText parses a shape's name.
func (s *Shape) UnmarshalText(b []byte) error {
	v, err := ParseShape(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Config describes a trace. The zero value of a fraction turns that kind of
// step off; DefaultConfig gives a reasonable mix. "Fraction" knobs are
// approximate shares of work steps: a step whose kind is impossible at that
// moment (no free lock, nothing to close, no object of that kind) becomes a
// plain access instead.
type Config struct {
	Seed       uint64 `json:"seed"`
	Events     int64  `json:"events"`     // exact number of events; at least MinEvents(Goroutines)
	Goroutines int    `json:"goroutines"` // including main; at least 1
	// Locks is the number of mutexes (each usable in read or write mode);
	// with none, the lock-protected share of Vars is never accessed.
	Locks int `json:"locks"`
	Vars  int `json:"vars"` // shared variables: racy, handed off, and lock-protected

	// RacyFraction is the share of Vars that carry a planted race (at least
	// one when positive and Vars > 0); each racy variable gets one race.
	RacyFraction float64 `json:"racy_fraction"`
	// Nesting is the most locks a goroutine holds at once; 0 means 1.
	Nesting int   `json:"nesting"`
	Shape   Shape `json:"shape"`

	// WaveSize is the number of workers per batch for Waves; 0 means a
	// quarter of the workers (at least 1).
	WaveSize int `json:"wave_size"`
	// Locals is the number of private variables per goroutine; 0 means 1.
	Locals int `json:"locals"`
	// ReadFraction is the share of plain accesses (and of atomic
	// operations) that read.
	ReadFraction float64 `json:"read_fraction"`
	// LockFraction is the share of steps that try to acquire a lock.
	LockFraction float64 `json:"lock_fraction"`
	// RLockFraction is the share of acquisitions in read mode; a goroutine
	// only reads the variables of a lock it holds in read mode.
	RLockFraction float64 `json:"rlock_fraction"`
	// HandoffFraction is the share of Vars passed between goroutines by
	// snd/rcv (on the SyncObjs) and by join: happens-before clean, not
	// lockset clean. It is also the chance that an access outside a
	// critical section goes to a handed-off variable (when it finds one it
	// owns or can claim). Without SyncObjs, variables change hands only
	// when a parent joins a child.
	HandoffFraction float64 `json:"handoff_fraction"`

	AtomicVars     int     `json:"atomic_vars"`
	AtomicFraction float64 `json:"atomic_fraction"` // share of steps that are atomic operations
	SyncObjs       int     `json:"sync_objs"`
	SyncFraction   float64 `json:"sync_fraction"` // share of steps that are snd/rcv without data
	Funcs          int     `json:"funcs"`
	FuncDepth      int     `json:"func_depth"`    // deepest function nesting; 0 means 1
	FuncFraction   float64 `json:"func_fraction"` // share of steps that enter a function

	// RepeatFraction is the chance that an access of a goroutine that took
	// part in a planted race repeats its racy access (at the same site).
	RepeatFraction float64 `json:"repeat_fraction"`
	// Switch is the chance of switching to another goroutine after each
	// event (0: run a goroutine until it blocks or ends, so that few
	// goroutines ever run side by side and races may go unplanted).
	Switch float64 `json:"switch"`
	// Values records the value of each access and atomic operation (writes
	// get fresh values, reads the variable's current one); without it,
	// events carry trace.FlagValueUnknown.
	Values bool `json:"values"`
}

// DefaultConfig returns the configuration `racekit gen` starts from.
func DefaultConfig() Config {
	return Config{
		Seed:           1,
		Events:         1_000_000,
		Goroutines:     8,
		Locks:          4,
		Vars:           64,
		RacyFraction:   0.1,
		Nesting:        2,
		Shape:          Flat,
		Locals:         4,
		ReadFraction:   0.6,
		LockFraction:   0.1,
		RLockFraction:  0.2,
		AtomicVars:     2,
		AtomicFraction: 0.02,
		SyncObjs:       2,
		SyncFraction:   0.02,
		Funcs:          8,
		FuncDepth:      3,
		FuncFraction:   0.05,
		RepeatFraction: 0.02,
		Switch:         0.3,
		Values:         true,
	}
}

// MinEvents is the smallest trace with n goroutines: Begin and End of each,
// Fork and Join of each but main.
func MinEvents(n int) int64 { return 4*int64(n) - 2 }

// Size limits, so that a mistyped flag gives an error rather than an
// exhausted memory: the generator keeps about 200 bytes per goroutine and
// a few words per object.
const (
	maxGoroutines = 1 << 20
	maxObjects    = 1 << 24
)

// Normalized checks c and returns it with its "0 means ..." fields filled
// in: the configuration Generate actually uses. It allows at most 2^20
// goroutines and 2^24 objects (variables, locals, atomics, locks, sync
// objects and functions together).
func (c Config) Normalized() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("gen: "+format, args...)
	}
	if c.Shape >= numShapes {
		return bad("invalid shape %d", uint8(c.Shape))
	}
	if c.Goroutines < 1 || c.Goroutines > maxGoroutines {
		return bad("Goroutines = %d, want 1..%d", c.Goroutines, maxGoroutines)
	}
	if c.Events < MinEvents(c.Goroutines) {
		return bad("Events = %d is too few for %d goroutines (need at least %d)",
			c.Events, c.Goroutines, MinEvents(c.Goroutines))
	}
	counts := []struct {
		name string
		v    int
	}{
		{"Locks", c.Locks}, {"Vars", c.Vars}, {"Nesting", c.Nesting}, {"WaveSize", c.WaveSize},
		{"Locals", c.Locals}, {"AtomicVars", c.AtomicVars}, {"SyncObjs", c.SyncObjs},
		{"Funcs", c.Funcs}, {"FuncDepth", c.FuncDepth},
	}
	for _, k := range counts {
		if k.v < 0 || k.v > maxObjects {
			return bad("%s = %d, want 0..%d", k.name, k.v, maxObjects)
		}
	}
	fracs := []struct {
		name string
		v    float64
	}{
		{"RacyFraction", c.RacyFraction}, {"ReadFraction", c.ReadFraction},
		{"LockFraction", c.LockFraction}, {"RLockFraction", c.RLockFraction},
		{"HandoffFraction", c.HandoffFraction}, {"AtomicFraction", c.AtomicFraction},
		{"SyncFraction", c.SyncFraction}, {"FuncFraction", c.FuncFraction},
		{"RepeatFraction", c.RepeatFraction}, {"Switch", c.Switch},
	}
	for _, f := range fracs {
		if !(f.v >= 0 && f.v <= 1) { // also rejects NaN
			return bad("%s = %v, want 0..1", f.name, f.v)
		}
	}
	if s := c.LockFraction + c.FuncFraction + c.AtomicFraction + c.SyncFraction; s > 1 {
		return bad("LockFraction+FuncFraction+AtomicFraction+SyncFraction = %v, want at most 1", s)
	}
	if s := c.RacyFraction + c.HandoffFraction; s > 1 {
		return bad("RacyFraction+HandoffFraction = %v, want at most 1", s)
	}
	objs := int64(c.Vars) + int64(c.Goroutines)*int64(max(c.Locals, 1)) + int64(c.AtomicVars) +
		int64(c.Locks) + int64(c.SyncObjs) + int64(c.Funcs)
	if objs > maxObjects {
		return bad("%d objects in all, want at most %d", objs, maxObjects)
	}
	if c.Nesting == 0 {
		c.Nesting = 1
	}
	if c.FuncDepth == 0 {
		c.FuncDepth = 1
	}
	if c.Locals == 0 {
		c.Locals = 1
	}
	if c.WaveSize == 0 {
		c.WaveSize = max(1, (c.Goroutines-1+3)/4)
	}
	return c, nil
}

// Truth is the ground truth of a generated trace, written next to it as
// JSON.
type Truth struct {
	Config Config `json:"config"` // normalized
	Events int64  `json:"events"` // events written
	// Races are the planted races, one per distinct site pair, sorted by
	// Pair.
	Races []Race `json:"races"`
	// Unplanted counts racy variables whose race found no moment with two
	// running goroutines; they are never accessed.
	Unplanted int `json:"unplanted"`
	// LocksetExact is true when a pairwise lockset check flags exactly
	// Pairs() (no handed-off variables were used).
	LocksetExact bool `json:"lockset_exact"`
}

// Race is one planted race.
type Race struct {
	Pair finding.Pair `json:"pair"` // {s1, s2} with A <= B
	Obj  uint64       `json:"obj"`  // the racy variable
	Name string       `json:"name"` // its name in the trace's Meta
	// The adjacent occurrence: First writes Obj at Seq (site s1), then
	// Second accesses it at Seq+1 (site s2, writing when SecondWrite).
	First       trace.GID `json:"first"`
	Second      trace.GID `json:"second"`
	SecondWrite bool      `json:"second_write"`
	Seq         uint64    `json:"seq"`
}

// Pairs returns the planted races' site pairs, sorted: what a precise
// happens-before detector must report, deduplicated by site pair.
func (t *Truth) Pairs() []finding.Pair {
	ps := make([]finding.Pair, len(t.Races))
	for i, r := range t.Races {
		ps[i] = r.Pair
	}
	finding.SortPairs(ps)
	return ps
}

// Generate writes the trace described by cfg into w (definitions before the
// events that use them) and returns its ground truth. It does not close w.
func Generate(cfg Config, w trace.Writer) (*Truth, error) {
	c, err := cfg.Normalized()
	if err != nil {
		return nil, err
	}
	g := newGenerator(c, w)
	if err := g.loop(); err != nil {
		return nil, err
	}
	return g.truth(), nil
}

// prob converts a probability to a threshold t for a uniform 32-bit draw u:
// u < t has probability f (0 never holds, 1 always does).
func prob(f float64) uint64 {
	switch {
	case f <= 0:
		return 0
	case f >= 1:
		return 1 << 32
	}
	return uint64(f * (1 << 32))
}
