package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/racekit/racekit/trace"
)

// Kind is the operation a goroutine is about to perform at a scheduling
// point.
type Kind uint8

// The kinds of scheduling points. Resume is the return from an operation
// during which the goroutine left the scheduler's control (a blocking
// channel operation, Cond.Wait).
const (
	KindOther Kind = iota
	KindBegin
	KindEnd // rt: a test function's departure into the testing framework
	KindRead
	KindWrite
	KindLock
	KindRLock
	KindUnlock
	KindRUnlock
	KindSend
	KindRecv
	KindClose
	KindSelect
	KindWait // WaitGroup.Wait
	KindDone // WaitGroup.Done or a negative Add
	KindOnce // Once.Do and the sync.OnceFunc family
	KindCondWait
	KindSignal // Cond.Signal
	KindBroadcast
	KindAtomic
	KindFork
	KindResume
	KindSleep // time.Sleep on the virtual clock (rt)
	// KindTimer is a virtual timer's firing: not a goroutine's point but
	// a choice offered to the strategy as goroutine TimerG (rt).
	KindTimer
	numKinds
)

// TimerG is the name under which the virtual clock's timers take part in
// the choices (Point.G; steps of a schedule): the strategy may fire the
// earliest pending timer whenever its deadline has passed.
const TimerG = "timer"

var kindNames = [numKinds]string{"other", "begin", "end", "r", "w", "lock", "rlock", "unlock", "runlock",
	"send", "recv", "close", "select", "wait", "done", "once", "condwait", "signal", "broadcast", "atomic", "fork", "resume", "sleep", "timer"}

// String returns the kind's mnemonic, as used in schedule files.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind%d", uint8(k))
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return KindOther, false
}

// Op returns the trace op a point of kind k records (OpInvalid for kinds
// that record none or several).
func (k Kind) Op() trace.Op {
	switch k {
	case KindBegin:
		return trace.OpBegin
	case KindEnd:
		return trace.OpEnd
	case KindRead:
		return trace.OpRead
	case KindWrite:
		return trace.OpWrite
	case KindLock, KindRLock:
		return trace.OpAcquire
	case KindUnlock, KindRUnlock:
		return trace.OpRelease
	case KindFork:
		return trace.OpFork
	case KindSend, KindClose, KindDone, KindSignal, KindBroadcast:
		return trace.OpSyncRelease
	case KindRecv, KindWait:
		return trace.OpSyncAcquire
	}
	return trace.OpInvalid
}

// IsAccess reports whether k is a data access (Read or Write).
func (k Kind) IsAccess() bool { return k == KindRead || k == KindWrite }

// Point is one goroutine waiting at a scheduling point.
type Point struct {
	G       string // stable name (see the package doc)
	N       int    // index of this point among G's scheduling points, from 0
	Kind    Kind
	Obj     uint64 // the address or sync object; 0 when unknown
	Site    string // file:line of the statement, "" when unknown
	Enabled bool   // G can perform the operation without blocking
	// Pair is true for a data access at one of the statements under test
	// (the racing pair of RaceFuzzer).
	Pair bool
	// Stmt says which statements of the pair (SitePair.Stmts: bit i for
	// statement i) a data access is at: Algorithm 2 pairs a goroutine at
	// one statement with one at the other, so a race of two goroutines at
	// the same statement confirms the pair only when both its statements
	// are that one (a statement racing with itself: both bits set).
	Stmt uint8
	// Col is the access's column on Site's line (0 when unknown).
	Col int
	// Size is how many bytes from Obj a data access reads or writes (0:
	// unknown, taken as the first byte alone). Two accesses touch the same
	// memory location when their ranges overlap: a whole-struct or copy
	// access and one of a field or element inside it (docs/semantics.md:
	// an access is a range of bytes, recorded word by word).
	Size uint64
	// Ev is the position of the first event G records after this point
	// (-1 when the run records no trace): how many positional events G
	// recorded before it (Positional: synchronization, goroutine life,
	// atomics, accesses at the statements under test). A schedule read
	// off a recorded trace (a PECAN clip, a predicted race's witness) is
	// given in the same positions (Positions) and can be followed (Clip),
	// even where the run's other plain accesses differ from the
	// recording's.
	Ev int
	// Yield is true at a preemption (rt's RACEKIT_SCHED_PREEMPT): G gives
	// the token up although it could go on, so Random chooses among the
	// others when one is enabled.
	Yield bool
}

// String is "G#N kind site".
func (p Point) String() string {
	s := fmt.Sprintf("%s#%d %s", p.G, p.N, p.Kind)
	if p.Site != "" {
		s += " " + p.Site
	}
	return s
}

// Strategy decides which waiting goroutine runs next.
//
// Next is called with the goroutines waiting at a scheduling point, in
// creation order (a deterministic order for a deterministic schedule), at
// least one of them enabled. It returns the index of the one to run; it
// must be enabled.
type Strategy interface {
	Next(w []Point) int
}

// Wanter is implemented by strategies that follow a schedule: Want names
// the goroutine the next step belongs to ("" if any will do). The caller
// gives an absent goroutine that is known to be running free a moment to
// arrive before it calls Next.
type Wanter interface {
	Want() string
}

// Postponer is implemented by strategies that hold goroutines back
// (RaceFuzzer): when only the goroutines Postponed names could proceed,
// the caller lets time pass, offering the earliest timer (TimerG) as if
// nothing could proceed. A postponed goroutine waits; the program's other
// goroutines are not held back by it, their sleeps and timeouts included.
type Postponer interface {
	Postponed() []string
}

// Pauser is implemented by strategies that postpone a goroutine once it
// reaches certain points (DeadlockFuzzer): WouldPause reports whether p
// is one. The caller then lets time pass (as for Postponer) when the only
// goroutines that could proceed are postponed or about to be: a cycle's
// other goroutine may be asleep on a timer.
type Pauser interface {
	WouldPause(p Point) bool
}

// Parker is implemented by strategies that follow a schedule: the caller
// tells it that the goroutine it wants is parked inside the operation of
// its last point (a send whose receiver comes later in the schedule), so
// it will not arrive at a point by itself. Parked reports whether the
// strategy moved on (the step was that operation's own); if not, the
// caller waits for the goroutine as for one running free.
type Parker interface {
	Parked(g string) bool
}

// DepartedExit is the exit status of a clip run that rt stopped at its
// first departure (RACEKIT_CLIP_STOP): the run has answered its question
// (the clip cannot be followed), and what the program does afterwards, at
// random, says nothing about the anomaly. (A deadlock rt breaks exits with
// status 3.)
const DepartedExit = 4

// Note is something a strategy observed: a race created, a divergence
// from a schedule, a postponed goroutine released.
type Note struct {
	// Kind is what happened. Strategies note "race" (RaceFuzzer created a
	// race: FormatRace's text), "release" (a postponed goroutine let go),
	// "divergence" (Replay) and "departure" (Clip); rt notes "escape" (a
	// goroutine left its control), "gone" (one ended in untraced code),
	// "rejoin" and "deadlock".
	Kind string
	Text string
}

// Noter is implemented by strategies that report Notes. Notes returns the
// notes made since the last call.
type Noter interface {
	Notes() []Note
}

// NewRand returns the generator of a run with the given seed: a PCG
// source, so that one seed gives one sequence on every platform.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// enabled returns the indices of w's enabled points.
func enabled(w []Point) []int {
	var out []int
	for i := range w {
		if w[i].Enabled {
			out = append(out, i)
		}
	}
	return out
}

// Random picks an enabled goroutine uniformly at random.
type Random struct {
	r *rand.Rand
}

// NewRandom returns the Random strategy seeded with seed.
func NewRandom(seed uint64) *Random { return &Random{r: NewRand(seed)} }

// Next implements Strategy.
func (s *Random) Next(w []Point) int {
	en := enabled(w)
	if len(en) == 0 {
		return 0
	}
	if len(en) > 1 {
		en = slices.DeleteFunc(en, func(i int) bool { return w[i].Yield })
	}
	return en[s.r.IntN(len(en))]
}

// SitePair is the statements under test: the racing pair of RaceFuzzer,
// or the sites of an anomaly's events (a clip: two to four). A statement
// is "file:line", "file:line:col" or either followed by ":r" or ":w"
// (ParseStmt): with a column it is one access, the one at that column
// (the instrumenter's site of the access expression), and with a kind
// only that access's reads or writes (x++ reads and then writes x at one
// column). Without them it is every access on the line, the form pairs
// files had before phase 1 carried the access through. A file matches a
// site whose file ends with it at a path boundary.
type SitePair []string

// Stmt is one statement of a SitePair, parsed.
type Stmt struct {
	File string
	Line int
	Col  int  // 0: any access on the line
	Kind Kind // KindRead or KindWrite; KindOther: either
}

// ParseStmt parses "file:line[:col][:r|:w]".
func ParseStmt(s string) (Stmt, bool) {
	var st Stmt
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		switch s[i+1:] {
		case "r":
			st.Kind, s = KindRead, s[:i]
		case "w":
			st.Kind, s = KindWrite, s[:i]
		}
	}
	site := trace.ParseSiteLabel(s)
	if site.Line <= 0 || site.File == "" {
		return Stmt{}, false
	}
	st.File, st.Line, st.Col = site.File, site.Line, site.Col
	return st, true
}

// String is the statement as ParseStmt reads it.
// LineSite drops a statement's column and kind: file:line:col:w becomes
// file:line; a string that is no statement is returned as it is.
func LineSite(s string) string {
	st, ok := ParseStmt(s)
	if !ok {
		return s
	}
	st.Col, st.Kind = 0, KindOther
	return st.String()
}

func (st Stmt) String() string {
	s := st.File + ":" + strconv.Itoa(st.Line)
	if st.Col > 0 {
		s += ":" + strconv.Itoa(st.Col)
	}
	if st.Kind == KindRead || st.Kind == KindWrite {
		s += ":" + st.Kind.String()
	}
	return s
}

// At reports whether an access of kind k at file:line:col (col 0:
// unknown) is this statement's.
func (st Stmt) At(file string, line, col int, k Kind) bool {
	return line == st.Line && sameFile(file, st.File) &&
		(st.Col == 0 || col == st.Col) &&
		(st.Kind == KindOther || k == st.Kind)
}

// AtSite is At for a lock or other operation (any kind) at site
// "file:line[:col]" and column col, as points and held locks give them.
func (st Stmt) AtSite(site string, col int) bool {
	file, line, ok := splitSite(site)
	return ok && st.At(file, line, col, KindOther)
}

// Compatible reports whether st and o can name one access: the same line
// of one file, and equal columns and kinds where both give them (a
// line-only statement is compatible with every access on its line).
func (st Stmt) Compatible(o Stmt) bool {
	return st.Line == o.Line && (sameFile(st.File, o.File) || sameFile(o.File, st.File)) &&
		(st.Col == 0 || o.Col == 0 || st.Col == o.Col) &&
		(st.Kind == KindOther || o.Kind == KindOther || st.Kind == o.Kind)
}

// ParsePair parses "file:line~file:line" (also accepted: a comma or a
// space as separator), or more statements separated by "~"; each
// statement may give a column and a kind (ParseStmt).
func ParsePair(s string) (SitePair, error) {
	s = strings.TrimSpace(s)
	var parts []string
	switch {
	case strings.Contains(s, "~"):
		parts = strings.Split(s, "~")
	case strings.Contains(s, ","):
		parts = strings.SplitN(s, ",", 2)
	case strings.Contains(s, " "):
		parts = strings.SplitN(s, " ", 2)
	}
	if len(parts) < 2 {
		return nil, fmt.Errorf("pair %q: want file:line~file:line", s)
	}
	p := make(SitePair, len(parts))
	for i, x := range parts {
		x = strings.TrimSpace(x)
		if _, ok := ParseStmt(x); !ok {
			return nil, fmt.Errorf("pair %q: %q is not file:line[:col][:r|:w]", s, x)
		}
		p[i] = x
	}
	return p, nil
}

// String is "a~b" ("" for no statements).
func (p SitePair) String() string { return strings.Join(p, "~") }

// Matches reports whether some statement of the pair is on the line
// file:line (whatever its column and kind).
func (p SitePair) Matches(file string, line int) bool {
	for _, s := range p {
		if st, ok := ParseStmt(s); ok && st.Line == line && sameFile(file, st.File) {
			return true
		}
	}
	return false
}

// Stmts returns which of the pair's statements an access of kind k at
// file:line:col is at: bit i for statement i (Point.Stmt; statements past
// the eighth are not told apart from it). 0: it is not a point of the
// pair. Only the pair's own accesses are points, so that a harmless read
// on the line of a racing write does not postpone its goroutine, which
// would lower the probability of creating the race (§3.2, Example 2: 1).
func (p SitePair) Stmts(file string, line, col int, k Kind) uint8 {
	var m uint8
	for i, s := range p {
		if st, ok := ParseStmt(s); ok && st.At(file, line, col, k) {
			m |= 1 << min(i, 7)
		}
	}
	return m
}

// splitSite splits "file:line" or "file:line:col" (trace.ParseSiteLabel).
func splitSite(s string) (string, int, bool) {
	site := trace.ParseSiteLabel(s)
	return site.File, site.Line, site.Line > 0
}

// sameFile reports whether path names the file want: equal, or ending in
// "/"+want.
func sameFile(path, want string) bool {
	return path == want || strings.HasSuffix(path, "/"+strings.TrimPrefix(want, "./"))
}

// RaceFuzzer is Algorithm 1 of Sen (PLDI'08) with Racing (Algorithm 2),
// driven one decision at a time. Points with Pair set are the statements
// of RaceSet.
//
// Each call of Next is one or more iterations of Algorithm 1's loop: pick
// a random enabled goroutine t that is not postponed; if its next
// statement is not in the racing pair, run it; otherwise compute R, the
// postponed goroutines whose next access is at the pair's other statement
// and to the same location (overlapping bytes), with at least one write
// (racing). R ≠ ∅ is a real race: it is reported, and a coin flip
// either runs t (R stays postponed) or postpones t and runs every member
// of R, one per call. R = ∅: t is postponed. When every enabled goroutine
// is postponed (line 26), a random one is released.
//
// A released goroutine runs its statement when next picked: Algorithm 1
// as printed would postpone it again at once (its next statement is still
// in RaceSet), which is not what §2.2 describes. The monitor of §4
// (livelocks) is a bound: a goroutine postponed for more than MaxWait
// decisions is released.
type RaceFuzzer struct {
	holdBack
	races []Race
}

// holdBack is what RaceFuzzer and DeadlockFuzzer share: the goroutines a
// strategy holds back and since which decision, the ones released to run
// next, the livelock monitor (§4: one held for more than MaxWait decisions
// is released) and Algorithm 1's line 26 (every enabled goroutine held: one
// is released at random).
type holdBack struct {
	r     *rand.Rand
	held  map[string]bool
	since map[string]int // decision at which each was held back
	run   []string       // goroutines to run next, in order (released)
	step  int
	notes []Note
	// MaxWait bounds the decisions a goroutine stays held back.
	MaxWait int
}

func newHoldBack(seed uint64) holdBack {
	return holdBack{r: NewRand(seed), held: map[string]bool{}, since: map[string]int{}, MaxWait: 5000}
}

// Race is a race RaceFuzzer created: two goroutines about to access the
// same location at the pair's statements, one of them writing, brought
// next to each other; First ran its access before Second.
type Race struct {
	Step          int // decision number
	First, Second Point
}

// NewRaceFuzzer returns the RaceFuzzer strategy seeded with seed.
func NewRaceFuzzer(seed uint64) *RaceFuzzer {
	return &RaceFuzzer{holdBack: newHoldBack(seed)}
}

// Races returns the races created so far.
func (s *RaceFuzzer) Races() []Race { return s.races }

// Notes implements Noter.
func (h *holdBack) Notes() []Note {
	n := h.notes
	h.notes = nil
	return n
}

// Postponed returns the names of the goroutines held back, sorted
// (Postponer).
func (h *holdBack) Postponed() []string {
	out := make([]string, 0, len(h.held))
	for g := range h.held {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

func (h *holdBack) hold(g string) {
	h.held[g] = true
	h.since[g] = h.step
}

func (h *holdBack) unhold(g string) {
	delete(h.held, g)
	delete(h.since, g)
}

// begin starts a decision over w: it forgets the goroutines held back that
// are no longer (absent, or keep reports false), releases those held too
// long, and returns the index of a released goroutine to run now, if one
// is enabled.
func (h *holdBack) begin(w []Point, byName map[string]int, keep func(Point) bool, why string) (int, bool) {
	h.step++
	for g := range h.held {
		if i, ok := byName[g]; !ok || !keep(w[i]) {
			h.unhold(g)
		}
	}
	for _, g := range h.Postponed() {
		if h.step-h.since[g] > h.MaxWait {
			h.unhold(g)
			h.run = append(h.run, g)
			h.notes = append(h.notes, Note{"release", g + " " + why + " too long"})
		}
	}
	for len(h.run) > 0 {
		g := h.run[0]
		h.run = h.run[1:]
		if i, ok := byName[g]; ok && w[i].Enabled {
			h.unhold(g)
			return i, true
		}
	}
	return 0, false
}

// candidates returns the enabled goroutines not held back.
func (h *holdBack) candidates(w []Point) []int {
	var cand []int
	for _, i := range enabled(w) {
		if !h.held[w[i].G] {
			cand = append(cand, i)
		}
	}
	return cand
}

// releaseOne releases a goroutine held back, at random, when every enabled
// one is (Algorithm 1, line 26), and returns its index; false if none is
// held.
func (h *holdBack) releaseOne(byName map[string]int, why string) (int, bool) {
	ps := h.Postponed()
	if len(ps) == 0 {
		return 0, false
	}
	g := ps[h.r.IntN(len(ps))]
	h.unhold(g)
	h.notes = append(h.notes, Note{"release", g + " (all enabled goroutines " + why + ")"})
	return byName[g], true
}

// next is the choice the strategies that hold goroutines back at points
// of their own share (DeadlockFuzzer, AtomFuzzer, DelayFuzzer: Algorithm 1
// without RaceFuzzer's racing test): a released goroutine first (begin,
// with keep and why); else a random enabled one not held, which pause may
// hold back instead (returning the note's text), until one is chosen;
// when every enabled goroutine is held, one is released at random (line
// 26). It returns the index chosen.
func (h *holdBack) next(w []Point, keep func(Point) bool, why string, pause func(Point) (string, bool)) int {
	byName := make(map[string]int, len(w))
	for i := range w {
		byName[w[i].G] = i
	}
	if i, ok := h.begin(w, byName, keep, why); ok {
		return i
	}
	for {
		cand := h.candidates(w)
		if len(cand) == 0 {
			i, _ := h.releaseOne(byName, why)
			return i // 0 with nothing enabled: the caller does not call us then
		}
		i := cand[h.r.IntN(len(cand))]
		if text, ok := pause(w[i]); ok {
			h.hold(w[i].G)
			h.notes = append(h.notes, Note{"pause", text})
			continue
		}
		return i
	}
}

// racing is Algorithm 2's test for two goroutines waiting at accesses of
// the pair (Sen, PLDI'08, §2.2): their next statements access the same
// memory location, at least one of them writing, and they are the pair's
// two statements, one goroutine at each. The race RaceFuzzer creates
// confirms the pair (σ1, σ2) phase 1 reported, so two goroutines at σ1
// alone are not that race (they may be another, which its own pair
// (σ1, σ1) confirms).
func racing(a, b Point) bool {
	return a.Kind.IsAccess() && b.Kind.IsAccess() && (a.Kind == KindWrite || b.Kind == KindWrite) &&
		(a.Stmt&1 != 0 && b.Stmt&2 != 0 || a.Stmt&2 != 0 && b.Stmt&1 != 0) && overlap(a, b)
}

// overlap reports whether a's and b's byte ranges [Obj, Obj+Size)
// intersect (an unknown size is one byte). The same location is any
// common byte: a 16-byte struct written at X and its field read at X+8
// race; two distinct fields of one word do not, as in Go's memory model.
func overlap(a, b Point) bool {
	if a.Obj == 0 || b.Obj == 0 {
		return false
	}
	return a.Obj < b.Obj+max(b.Size, 1) && b.Obj < a.Obj+max(a.Size, 1)
}

// Next implements Strategy.
func (s *RaceFuzzer) Next(w []Point) int {
	byName := make(map[string]int, len(w))
	for i := range w {
		byName[w[i].G] = i
	}
	// A postponed goroutine is always waiting at its pair statement; one
	// that is not (it was let go by the caller's own monitor) is forgotten.
	if i, ok := s.begin(w, byName, func(p Point) bool { return p.Pair && p.Enabled }, "postponed"); ok {
		return i
	}
	for {
		cand := s.candidates(w)
		if len(cand) == 0 {
			// Line 26: postponed = Enabled(s): release a random one.
			i, _ := s.releaseOne(byName, "postponed")
			return i // 0 with nothing enabled: the caller does not call us then
		}
		i := cand[s.r.IntN(len(cand))]
		t := w[i]
		if !t.Pair {
			return i
		}
		// Algorithm 2: Racing(s, t, postponed).
		var R []string
		for _, g := range s.Postponed() {
			if racing(t, w[byName[g]]) {
				R = append(R, g)
			}
		}
		if len(R) == 0 {
			s.hold(t.G)
			continue
		}
		if s.r.IntN(2) == 0 {
			for _, g := range R {
				s.record(t, w[byName[g]])
			}
			return i
		}
		for _, g := range R {
			s.record(w[byName[g]], t)
		}
		s.hold(t.G)
		for _, g := range R {
			s.unhold(g)
		}
		s.run = append(s.run, R[1:]...)
		return byName[R[0]]
	}
}

func (s *RaceFuzzer) record(first, second Point) {
	s.races = append(s.races, Race{Step: s.step, First: first, Second: second})
	s.notes = append(s.notes, Note{"race", FormatRace(first, second)})
}

// FormatRace is the text of a race note: "FIRST | SECOND", each a point
// (its goroutine, point index, kind and site), First having run first.
func FormatRace(first, second Point) string {
	return first.String() + " | " + second.String()
}
