// Package static finds data races in Go packages without running them. It
// is RELAY (Voung, Jhala, Lerner: "RELAY: Static Race Detection on Millions
// of Lines of Code", FSE 2007; seed 003) as a go/analysis analyzer, so it
// runs standalone (`racekit vet`), under `go vet -vettool` (cmd/racekit-vet)
// and wherever analyzers run.
//
// # Using it
//
//	racekit vet ./...                  # text, like go vet; exit 66 on warnings
//	racekit vet --json ./...           # warnings and filter counts as JSON
//	racekit vet --sarif ./... > r.sarif  # SARIF 2.1.0 for code scanning
//	racekit vet --pairs pairs.jsonl .  # site pairs for racekit fuzz to confirm
//	racekit vet --stats std            # counters: lines, functions, time, memory
//	go vet -vettool=$(which racekit-vet) ./...
//
// A warning names the lvalue, both accesses (file:line:col, read or write),
// the goroutine each runs in, and the locks each surely holds:
//
//	./fig1.go:30:11: potential race on d.priv.stats.rxPackets: write in
//	goroutine AiroThread started at fig1.go:42:3 holding no lock; conflicts
//	with write at ./fig1.go:30:11 in another instance of the same goroutine
//	holding no lock
//
// Warnings are potential races (finding.Potential evidence): the analysis
// over-approximates what may run in parallel and what may alias, and its
// filters are heuristics. Confirm them dynamically.
//
// # Design
//
// The analysis follows the paper's section 3; each part names the figure it
// implements.
//
// Summaries (section 2, item 3). Each function gets a Summary: its relative
// lockset summary, the relative lockset (L₊, L₋) at exit (RelLockset), and its
// guarded access summary, the set of (lvalue, relative lockset, read/write)
// triples of the accesses it and its callees may make (AccessSet), all in
// terms of the function's parameters (receiver first), free variables
// (closures are summarized as if their captures were parameters) and
// package variables. Summaries are data with a lattice: RelLockset is the
// paper's (𝕃, ⊥, ⊤, ⊑, ⊔, ⊓); AccessSet maps (lvalue, kind, site) to the
// join of the locksets of that operation; Summary is their product (with
// a flat lattice for the symbolic return value). The laws are tested.
//
// Symbolic execution (section 3.1). On go/ssa (buildssa), locals are already
// registers, so the symbolic store σ is the SSA value graph: symEval maps
// every address-valued SSA value to an Lval — a root (formal, free variable,
// package variable, allocation site, or unknown) and an access path of
// field, element and load steps (Figure 2's x | x.f | p.f | (*o).f). A load
// evaluates to the incoming value of the lvalue it reads (init(o)); φ-nodes
// with different operands, loop-carried pointers and values from unknown
// callees become unknown roots (the paper's ⊤); paths are bounded in length
// so rebinding in recursion terminates (maxPath steps). A field of a struct
// value that is a cell's contents (a load, m[k], v, ok := m[k], or a local
// struct written once from one) is the contents of that cell's field.
// Calls evaluate through the callee's symbolic result for the first result
// (a formal-rooted lvalue, or a fresh object named after the call site; a
// nil returned on some path adds nothing).
//
// Points-to (section 3.1, 3.3, 3.4). pta is Steensgaard's unification-based,
// flow- and field-insensitive analysis over the package's SSA, calls
// resolved as below, external callees not unified. It serves isAccessible
// (an access is kept in a summary if its object is reachable from formals,
// free variables, results or package variables) and mayEqual (two lvalues
// with the same memory identity whose objects share a class). Field-
// insensitivity is compensated by memory identity (Lval.Mem): Go is type
// safe, so only cells of the same field of the same struct type, or of the
// same element type, may alias.
//
// Relative lockset analysis (section 3.2, Figures 3-5). A forward dataflow
// over each function's blocks with LockUpdate at calls: sync.Mutex and
// RWMutex Lock/Unlock are calls with summaries ({l}, {}) and ({}, {l});
// RLock/RUnlock the same with a read-mode lock (two read-mode holders do not
// exclude each other: LockSet.Excludes); TryLock adds the lock on the branch
// where it returned true only; sync.Locker calls lock their dynamic value;
// other callees contribute their summaries rebound to the actuals (Rebind).
// Deferred calls run at each return (ssa RunDefers), last first, with their
// lock effects and accesses; a defer that does not dominate the return, or
// sits in a loop, is joined with not having run. Locks inside structs
// reached through parameters are lvalues like any other (c.mu, d.priv.lock).
//
// Guarded accesses (section 3.3, Figure 6). A second pass records loads,
// stores, map reads and writes (m[k], delete, range), slice element writes
// by append/copy/clear, each with the relative lockset before it, and copies
// the callees' summaries rebound and lockUpdate'd. Channel operations,
// sync and sync/atomic calls, and the runtime's own state are not data
// accesses.
//
// Bottom-up order (section 2, 4.1). Within a package, functions are analyzed
// callees first over the strongly connected components of the call graph;
// a recursive component is iterated from ⊥ until its summaries stop
// changing (at most 8 rounds; then its locksets go to ⊤). Dynamic calls are
// resolved with golang.org/x/tools/go/callgraph: VTA over the package's
// functions seeded with CHA (or CHA alone). A call with no known callee
// adds no accesses and may release the locks reachable from its operands;
// such calls are counted. Across packages, summaries of exported functions
// and of all methods are go/analysis facts, so dependencies are analyzed
// first, exactly as go vet orders them; a summary is bounded to
// Config.MaxAccesses entries by merging sites (widening) and, if still too
// large, dropping entries (counted).
//
// Thread entry points (section 3.4). In Go they are: the targets of go
// statements (functions, closures with their captures bound, method values,
// interface methods through the call graph) and of WaitGroup.Go, each paired
// with the spawner's continuation after the statement and, when the
// statement can run more than once (in a loop, or in a function that may be
// called more than once), with itself; and handlers registered with
// net/http (HandleFunc, Handle, on the default or a ServeMux), each paired
// with itself. Every two entries of a package are paired too (Figure 7's
// all pairs). A goroutine starts with no lock, so its accesses' absolute
// locksets are their relative L₊; the continuation's are relative to the
// spawner's entry. Two instances of a goroutine never share an object that
// each instance allocates.
//
// time.AfterFunc callbacks are goroutines started at the call. A t.Run
// whose function calls t.Parallel starts a parallel subtest: paired with
// itself when the t.Run can run more than once and with every other entry,
// not with the parent's continuation (a parallel subtest waits for its
// parent's function to return), and only from its t.Parallel call on. A function
// that starts goroutines (a spawner) also leaves them running in its
// callers: each direct caller's accesses after the call are paired with
// the spawner's goroutines rebound through the call. A lock that each
// instance of a goroutine allocates anew is not common to two instances.
//
// An access inside the standard library is located, once it reaches a
// function outside it, at that function's call (Access.Via keeps the std
// operation and the std function called): a race inside a bytes.Buffer
// shared by two goroutines is one warning at the user's two calls, as
// Go's race report puts it, not one per pair of operations in the buffer.
//
// Warnings (Figure 7) are pairs of accesses from paired threads, at least
// one a write, whose lvalues may be equal and whose locksets exclude no
// common lock; one warning per pair of sites, chosen after the filters
// judged every pairing at those sites (a filtered pairing never hides an
// unfiltered one).
//
// Filters (section 4.3) classify warnings; each can be switched off and the
// report counts what each removed (applied in order; a warning is counted
// by the first enabled filter that matches):
//
//	thread-local  paper's 1: the object was allocated by the thread that
//	              accesses it (for the spawner: after the go statement)
//	large-reps    paper's 2 with k = 1: the lvalues are not one and the same
//	              symbolic lvalue (aliasing by points-to class or type only)
//	bootup        paper's 3: one access is in a package initializer after a
//	              go statement (Go's boot-up phase)
//	same-entry    paper's 4: both accesses from the same entry function;
//	              off by default, it would remove every race between two
//	              instances of a goroutine started in a loop
//	unpublished   Go: an access to a fresh object before it was published
//	              (stored, passed, captured, sent or returned) on any path
//	handoff       Go: a goroutine access before it signals (send, close,
//	              WaitGroup.Done) and a spawner access after it waits on the
//	              same channel or WaitGroup on every path (or a spawner send
//	              before a goroutine receive)
//
// # What is approximate
//
// Unsound, as in the paper, in modular places: calls with no resolved
// callee (counted), callees with no body or fact (assembly; counted),
// summaries truncated at Config.MaxAccesses (counted), pointers to struct
// fields taken with & and used as *int do not alias the field (memory
// identity), unsafe conversions, panics and recover, a lazily initialized
// object allocated once but reached by several goroutine instances, and the
// filters. Imprecise: Steensgaard's classes are coarse (large-reps removes
// what they alone decide), a load evaluates to its lvalue's incoming value
// whatever the function stored there before, the continuation of a go
// statement is the rest of the spawning function and of its direct callers
// in the package (not further callers', nor other packages'),
// and the spawner's entry lockset is taken as empty.
package static
