// Package rt is racekit's runtime: the code linked into a program that
// package instrument has rewritten. Instrumented code calls it at every
// possibly shared memory access, synchronization operation, goroutine
// creation and function boundary; rt turns each call into a trace.Event and
// writes the stream to a .rkt file (package trace/rkt).
//
// rt imports only the standard library and racekit's std-only packages
// trace and trace/rkt, because it is compiled into users' programs. The
// instrumenter does not import it as github.com/racekit/racekit/rt but as a
// standalone copy (module racekit.dev/rt, see package instrument), so that
// a user's module graph gains no dependency.
//
// # Switching it on
//
// Without configuration every hook returns at once. The program traces when
// its environment names an output:
//
//	RACEKIT_TRACE=FILE      write the trace to FILE
//	RACEKIT_TRACE_DIR=DIR   write DIR/<main package>.<pid>.rkt (for test
//	                        binaries, one file per binary run)
//	RACEKIT_TRACE_MINFREE=N stop tracing when the trace's file system has
//	                        less than N bytes free (K, M, G, T suffixes;
//	                        default 1G; 0: never; diskguard.go)
//	RACEKIT_SIGNALS=1       on SIGINT/SIGTERM, finish the trace and die by
//	                        the signal (unless the program handles it)
//	RACEKIT_DEDUP=0         record repeated accesses too (see dedup.go)
//	RACEKIT_DEDUP=release   an epoch of dedup ends at a release only, as
//	                        FastTrack's epochs do (for FastTrack alone)
//	RACEKIT_DEDUP_MAX=N     a goroutine's dedup table grows to N entries at
//	                        most (default 131072; dedup.go)
//	RACEKIT_WGMISUSE=0      no accesses for the Go race detector's
//	                        sync.WaitGroup annotations (wgmisuse.go), which
//	                        depend on the interleaving: for tests that
//	                        compare two runs' events
//	RACEKIT_BARRIERS=0      no BarrierPairs around untraced calls (barrier.go);
//	                        =1 keeps them in a sampled run, which has none
//	RACEKIT_SAMPLE=NAME     LiteRace sampling of accesses, RACEKIT_SEED for
//	                        the random samplers (sample.go)
//	RACEKIT_FILTER=tree     TREE in the writer (filter.go)
//	RACEKIT_SCHED=...       controlled scheduling for racekit fuzz and
//	                        replay (sched.go documents its variables)
//
// # Goroutine identity
//
// A goroutine is named by the Go runtime's goid, read from the runtime's g
// structure: a few instructions of assembly return the current g (TLS on
// amd64, register g on arm64), and the goid's offset inside g is found once
// at start-up by comparing candidate words with the goid that one
// runtime.Stack call prints, over several goroutines. The goid indexes a
// direct-mapped table of goroutine states (checked against the goid, with a
// map behind it), so the hot path parses no stack and takes no lock. On
// other architectures, or if the probe fails, rt falls back to parsing
// runtime.Stack (slow, correct). The stack bounds at the start of the
// runtime's g tell rt whether an address is in the goroutine's own stack,
// where nothing is recorded (onStack; docs/frontend.md, "Known limits").
//
// Goroutines started by an instrumented go statement are forked by their
// parent (Fork, which allocates the child's GID and records the fork) and
// begin by claiming that GID (Begin). A goroutine rt has not seen before
// (the main goroutine, the testing framework's goroutines, net/http's) is
// given a fresh GID with Parent trace.NoParent on its first event, so that
// detectors apply the rule for goroutines born in untraced code.
//
// # Global order
//
// The file holds one stream in one order, but the hooks take no common
// lock. Only synchronization needs a global order: every event other than
// a plain one (Read, Write, FuncEnter, FuncExit) or an acquire takes the
// next value s of an atomic counter, seq (an Alloc too: it must come after
// every access to the previous object at its addresses). The hooks record
// a release before the real operation (Unlock, channel send, WaitGroup
// Done, close) and an acquire after it returns (Lock, receive, Wait). An
// acquire (Acquire, SyncAcquire) is placed like a plain event, at a value
// of seq loaded after the operation: the release it observed added to seq
// before its own operation, so before that load, and sorts first; a
// release that sorts after it added to seq after the load, so its
// operation came after the acquire's and was not observed (an acquire only
// receives edges). That is the order a seq of its own would give, without
// an atomic add on the one counter every goroutine shares. An atomic
// operation is performed, and its seqs taken, under a lock striped by
// address, so the seqs of the operations on one word are in their real
// order; so are those of one sync.Map's methods. The counter sits alone on
// its cache line.
//
// An atomic operation is one record with trace.FlagGoAtomic for its
// private lock's acquire, the operation, its data access and the release
// (syncatomic.go), given four Seqs by the writer. An access of more than
// 4 words, a copy or a slice's elements is one range event (putRange),
// except under the writer's TREE filter or with RACEKIT_RANGES=0.
//
// A plain event takes no seq: it is placed at key (S, plain), where S is
// its goroutine's latest seq, or a larger value of seq loaded (Load, not
// Add) during the hook. Keys order by S, and at one S the synchronization
// event S comes first. Sorting by key, each goroutine's events in program
// order, is a linearization consistent with happens-before: an edge into
// a plain event comes through an acquire of its goroutine that precedes
// it, whose key is at most its own; an edge out of it leaves through a later
// synchronization event of its goroutine, whose seq is larger than any
// value loaded before it. Placing a plain event later than it happened
// (at a seq loaded after it) is safe too, as long as the load is made
// before the hook returns: what a goroutine does after the hook (which is
// what a synchronization invisible to rt, say net/http starting a
// goroutine, could be ordered after) comes after the seqs taken so far.
// So a goroutine moves S up now and then (every 64 plain events, and
// whenever it starts recording again after a synchronization), and when
// a goroutine born in untraced code appeared: its Begin takes its seq
// before the global generation (see dedup) moves, and a goroutine that
// sees the new generation moves S past it, so its events are not taken
// to be ordered before the newcomer.
//
// Each goroutine appends 16-byte records to its own chain of chunks,
// without a lock, an allocation (but one chunk per 4096 records) or any
// encoding. A record holds no key: a marker record sets the key of the
// records after it, so a run of plain events at one key costs 16 bytes
// each (values and a MethodBegin's addresses go in records of their own
// after the event). A goroutine commits its records by one
// compare-and-swap of its word: its committed count and a bound K below
// which it will add no record (its current key), or "idle" when it holds
// no uncommitted record and will load seq before it records again.
// Every hook commits what it wrote, but for a frame event (FuncEnter,
// FuncExit), which the goroutine's next event commits with its own: a
// frame names no memory and makes no edge, so where a steal's redo (below)
// places it among other goroutines' events does not matter. A
// goroutine goes idle after the events its hooks record right before an
// operation that may block (a release of a sync object, as before a
// channel send or receive, a select or I/O; a MethodBegin), and before
// the other operations that may block (a Lock that finds the lock held,
// Wait, Once.Do), and when a goroutine born in untraced code returns
// there (its last FuncExit).
//
// The writer (rounds in the callback of a timer, see "Flushing") merges
// the committed records by key and encodes them with fresh Seqs 1, 2, 3, ... into the file, up to a
// frontier: the smallest bound K of the goroutines, where an idle
// goroutine's bound is the value L of seq the writer loaded before it read
// the goroutine's word. That bound is valid by a store-load handshake:
// a goroutine leaving idle first stores its old key into its word, then
// loads seq. sync/atomic operations are sequentially consistent, so if
// the writer read the idle word, the goroutine's store comes after that
// read, and its load after the writer's load of L: it sees at least L.
// Plain events at the frontier's seq may still come from others, but
// plain events at one seq may be placed in any order; a synchronization
// event is written only once no goroutine can add a record with a smaller
// key.
//
// A goroutine that holds the frontier and stops committing (blocked in
// code that is not traced, or descheduled) would stop the writer. After
// 10ms without a change, the writer steals its word: it turns it idle with
// a compare-and-swap, taking the records committed so far. If the
// goroutine was writing records meanwhile, its own compare-and-swap then
// fails; it goes through the handshake again (seeing at least the
// writer's L), gives its plain records the new key and its
// synchronization records new seqs, all within the hook, and commits
// again. A hook of an atomic operation commits before it unlocks the
// stripe, so new seqs keep the order per address.
//
// Definitions (sites, goroutines) are queued under a mutex before the
// events that use them; the writer writes the queue after reading the
// words of a round, so before those events.
//
// # Flushing
//
// The writer runs a round when a goroutine fills a big chunk and every
// 10ms while it is armed. Blocks of 64 KiB go to the file as they fill; a
// partial block is written 50ms after its first event, so with the 10ms
// ticks and the 10ms steal delay an event reaches the file within about
// 100ms, and a killed run leaves a readable prefix (the header goes out
// when tracing starts).
//
// rt keeps no goroutine of its own alive while the program's goroutines
// are done or blocked, so that runtime.NumGoroutine, runtime.Stack(all)
// and goleak see what they see under go test -race. The rounds run in the
// callback of a time.AfterFunc timer, which has a goroutine only while it
// runs; the timer stays armed while a goroutine holds the frontier or has
// records not written, and a round that finds neither flushes the file
// and disarms it; the next record arms it again (at open, the store-load
// handshake above, with a flag; writer.go). In a synctest bubble a
// goroutine cannot arm it (its timers run on the bubble's fake clock):
// what it records waits for a round armed outside, helpWrite, Flush or
// Finish. Rounds time their steals and flushes on the runtime's monotonic
// clock (clock.go), which a bubble does not fake, so a round run in a
// bubble still steals from a goroutine blocked unseen. A goroutine born in
// untraced code has no End hook: a round retires its state once its g is
// dead or runs another goroutine (goid.go's retire), so the registry that
// every round reads holds no goroutine long gone. While
// testing.AllocsPerRun counts, rounds wait (holdWriter): the count would
// see their allocations. The controlled scheduler's monitor is a timer of the same kind
// (sched.go), the virtual clock has no goroutine (vtime.go), and the one
// goroutine that lives as long as the program is the signal watcher of
// RACEKIT_SIGNALS=1 (signal.go: only racekit run sets it).
// Goroutines that record faster than the writer writes wait for it once
// 64 MiB of records are pending. Flush writes every committed record of
// every goroutine, stealing from those that hold the frontier. The trace
// is finished (all records written, then the end block) when main returns
// or panics, on Exit (instrumented calls of os.Exit), at the end of an
// instrumented TestMain, at any other exit where the patched Go runtime
// calls the exit hook (racefini's places: a test binary without racekit's
// TestMain, os.Exit in untraced code), and on SIGINT/SIGTERM when
// RACEKIT_SIGNALS is set. A normal exit (main's return, os.Exit(0), a
// TestMain's return after a passing m.Run) first waits GORACE's
// atexit_sleep_ms with tracing on, as a -race binary's exit does
// (exit.go); hooks are no-ops
// afterwards, and a hook running in another goroutine during Finish may
// lose its event. A goroutine that ends by a panic flushes first.
//
// rt never panics into user code: an I/O error stops tracing with one
// message on stderr.
//
// The writer's rounds run in a time.AfterFunc callback and, while a
// goroutine records heavily, in a goroutine per wake that ends with its
// round (writer.go: wakeWriter, helpWrite). Where the runtime is patched
// (instrument's sysGoroutineCheck), those rounds run in goroutines of rt's
// that the runtime counts as its own (functions named rtsys...), so the
// program does not see them even while the writer works: the callback's
// goroutine only starts one.
//
// The records a goroutine buffers (buf.go) are in arrays outside the Go
// heap (arena.go), as go test -race's shadow memory is: the heap the
// program sees and the garbage collector's goal are its own.
//
// # Stalls and blocked goroutines
//
// A test binary's stall watch (stall.go, with rttest's stall.go) asks the
// patched runtime, from a timer's callback every 500 ms and with the world
// stopped, whether every goroutine is blocked in a channel, select or sync
// operation with no timer due before the -timeout alarm; when it holds
// twice, the trace is finished, a file beside it with trace.StallSuffix
// (.stalled) names the running tests, and the binary panics as the alarm
// would (docs/frontend.md, "A test stuck for good"). As the trace is
// finished, writeBlocked writes last an OpBlock event for each goroutine
// still blocked in a Lock, RLock, WaitGroup.Wait or Cond.Wait (what blockIn
// noted on the goroutine's state), which detect/leak reports.
//
// # Allocations
//
// Every allocation the patched Go runtime reports (mallochook.go; the
// patch is instrument/runtimehook.go's) is noted by the hook and written
// as an alloc event before the goroutine's next event, however many GC
// cycles ended meanwhile (mallochook.go's onMalloc says why). None is
// written for memory that no
// event named since the last alloc event there (touched.go: a bit per
// 16-byte granule, set before an event names it, cleared before an alloc
// event's seq is taken). docs/frontend.md, "Known limits", has the rest.
//
// # Channel operations of untraced code
//
// The patched runtime also calls onChan (chanhook.go; the patch is
// instrument/chanhook.go's) around every channel operation: a send's or
// close's begin releases an object of the channel's beside traced code's
// two, a receive's completion acquires it, and on an unbuffered channel a
// receive's begin and a send's completion make the edge back. The
// runtime's wrapper skips, without calling rt, operations traced code
// announced and goroutines rt has no state for (two fields rt sets in
// the runtime's g; the hook makes no state), so what it adds is the
// synchronization inside std or an untraced dependency (an io.Pipe's
// channels) on goroutines of the trace, which Go's race detector sees and
// traced code cannot. It records at
// once, unlike the allocation hook: the runtime calls it only outside its
// own locks and never inside a hook, and not while gcStart waits for its
// mark workers.
//
// # WaitGroups of untraced code
//
// The patched package sync calls onSync (synchook.go; the patch is
// instrument/synchook.go's) where the race build annotates a WaitGroup: a
// decrement releases the WaitGroup, the return of Wait acquires it, on
// goroutines rt has a state for, so that httptest.Server.Close (a Wait
// inside std) orders what its handlers did before it returns.
//
// # Mutexes and sync.Maps of untraced code
//
// The same patch wraps Mutex's and RWMutex's lock methods (onSync, ops
// 2-7: a Mutex's Unlock releases what its Lock acquires; an RWMutex's
// write Unlock releases what RLock and Lock acquire, its RUnlock what
// Lock acquires, the race build's readerSem and writerSem) and sync.Map's
// methods (maphook.go: each one atomic operation on the map under its
// stripe, as traced code's); the patched sync/atomic wraps atomic.Value's
// methods and those of its typed atomics (atomichook.go: the words they
// touch, as traced code's, a Load only when a store came since the
// goroutine's last). rt's own locks and maps (OwnMutex, OwnMap), the real
// operations of traced code's lock hooks and the atomics inside sync's
// RWMutex, WaitGroup and Pool (which the race build does not see) count,
// in the runtime's g, operations the hooks skip (ownmutex.go), so that
// none orders the program's goroutines; rt's own atomic words and Onces
// are not sync/atomic's and sync's (ownatomic.go).
//
// # System calls' I/O
//
// The patched package syscall calls onIO (iohook.go; the patch is
// instrument/syscallhook.go's) where the race build annotates syscall's
// ioSync: before a write system call (Write, Pwrite, Sendfile), a release
// of ioObj, and after a read one that succeeded (Read, Pread), an acquire,
// on goroutines rt has a state for, so that I/O inside any standard
// library call orders as under go test -race (a tls.Conn's Write that runs
// the handshake reads). The bytes a read system call put in the buffer of
// a Read call under way (FillW) are recorded before that acquire, as
// -race's WriteRange. The patched internal/poll calls onFD around each
// CompareAndSwap of a descriptor's fdMutex state word (and the Load that
// finds it closed): an acquire of the word, and a release after one that
// swapped, under its stripe, so that operations on one descriptor are
// ordered one after another, and a Close before what it made fail, as the
// race build sees those atomics. Then the I/O calls whose writes and reads
// are their own system calls record no edge of their own (IOSysWrite,
// IOSysRead). rt's own files (the trace, the schedule: ownFDs) record
// nothing.
//
// # Hooks
//
// Beside the access hooks (access.go) and those of sync, sync/atomic and
// channels (sync.go, syncatomic.go, chan.go):
//
//   - The hot hooks take the goroutine from the function's EnterG
//     (MutexLockG, MutexUnlockG, SendPreG, RecvRangeG, RecvG, Recv2G), and a
//     channel operation's first hook hands it to its second (SendPost,
//     RecvPost); gOr looks it up when handed nil or a state of an earlier
//     trace.
//   - Each channel operation records the range of message numbers it may
//     be (trace.ChanMsg, trace.FlagMessage), from four atomic counters per
//     channel kept beside it by a weak pointer (chanmsg.go).
//   - A Write of the program's that log or log/slog calls holding its
//     mutex records an acquire and release of it, inside the real critical
//     section; a call that wrote to untraced code, at its return
//     (callback.go).
//   - A database/sql driver's methods acquire one global object at entry
//     and release it at return, for the locks database/sql holds around
//     them (sqldriver.go).
//   - iter.Pull's coroutine is ordered with its caller at each switch, as
//     Go's iter.go annotates it (iter.go).
//   - Contexts (ctxtree.go): a cancel releases ctxObj, and a receive from
//     Done or a non-nil Err acquires it; a context's own mutex, keyed by
//     its Done channel: the first Done takes it, a WithCancel of it takes
//     it (CtxParent), and a cancel takes its own, its descendants' and its
//     parent's, from the tree of the contexts traced code made (CtxMade,
//     CtxCancel's ctxCancelled); a receive that sees a context done by a cancel rt did
//     not see, a deadline's, takes what that cancel took (ctxDoneSeen).
//   - BarrierPairs around untraced calls (barrier.go: reachable address
//     sets by cached reflect walks; docs/frontend.md, "BarrierPairs").
//   - The interceptors' hooks (std.go): ElemsW, ElemsWordsW, SortPre and
//     SortPost (a sort writes the elements it changed), RDeep, RSlicesOf,
//     R1Arrays and W1Arrays (the arrays a std object hands out, a Buffer's
//     Bytes, a Reader's Peek, recorded allocated the first time they are
//     seen with their object in a GC cycle: internalArray), CallerBuf (the
//     buffer untraced code hands to a traced Read or Write method,
//     likewise), HeldPtr (the address object a listener's Addr or a
//     connection's LocalAddr or RemoteAddr returns, likewise), RJSON's walk
//     of what encoding/json reads and RFmt's of what fmt prints, and Then
//     (docs/frontend.md, "Accesses inside the standard library");
//     RStringer, what a std address's String reads when an interface holds
//     it (stringer.go).
//   - reflect's hooks (reflect.go): the variable an addressable Value
//     refers to.
//   - The Go race detector's sync.WaitGroup annotations (wgmisuse.go): an
//     Add from 0 reads the group's sema word, the first Wait above 0 writes
//     it, from a count rt keeps per group in use.
//
// # Sampling while recording
//
// LiteRace's dispatch check runs in Enter, and in Sampled for leaf
// functions with two copies (sample.go). Under tl-ad and tp-ad, Enter,
// Sampled and Leave have fast paths that step the goroutine's Counter
// inline in the middle of a run (sampleState.quickStep, quickSkip).
// Instrumented code
// keeps the decision in a local _rkS… and passes it to every access hook,
// which returns at a branch in an unsampled invocation (the hooks are that
// test, inlined; their body is accessHook). tp-ad's slots are taken from
// their pool at a goroutine's first check, under slotMu, and given back at
// End or, for a goroutine born in untraced code, at Leave to depth 0. A
// sampled run records no BarrierPairs, which only rdit reads.
//
// Frames: an unsampled frame is recorded only when an event other than a
// lock or sync edge (sample.Frameless) is recorded inside it; in a full
// recording, any frame only when an event is recorded inside it
// (showFrames).
//
// Edges: a sampled run drops the redundant edges of every sync object
// (channels, the global objects of I/O, timers and contexts, WaitGroups,
// ...) by sample.Edges's rule (gstate.edge, gstate.releaseLock): a release
// after the goroutine's own release of the object with only releases
// between, an acquire when nothing was released since its last one, an
// empty critical section right after the goroutine's own release of the
// lock. No happens-before edge is lost. The counts are kept per slot of a
// hashed table (edgeVer). Full recordings keep these edges, since clips
// count sync events. An exclusive lock's acquisition is recorded with the
// goroutine's next event (acquireLock): one commit for a critical section
// whose accesses are unsampled, exact since no one else touches the lock
// meanwhile.
//
// Loop regions (loop.go): with RACEKIT_SAMPLE_LOOPS=1 each execution of a
// loop backs off as a function does, and LoopOf sends iterations that
// record nothing to the body's copy as written.
//
// # Controlled scheduling
//
// The controlled scheduler runs the traced goroutines one at a time under
// a strategy of package sched: sched.go has its state, start and site
// matching; sched_points.go a goroutine's points, arrivals, forks, begins
// and ends; sched_dispatch.go who runs next and what an operation does to
// the others; sched_monitor.go the monitor of escapes and deadlocks;
// sched_hooks.go the hooks' entry points. A select is decided by the run's
// seed and parked when no case can proceed. A range over a map visits its
// keys sorted, then shuffled by the seed (maprange.go). Under the random
// strategy, accesses may be preemption points too (RACEKIT_SCHED_PREEMPT,
// drawn by the token's holder from the seed).
//
// The virtual clock (vtime.go) serves time.Sleep, NewTimer, After,
// Timer.Stop and Reset, and Now, Since and Until of instrumented code. A
// due timer's firing is one more choice, goroutine "timer". When every
// controlled goroutine waits for a timer the clock jumps to the earliest
// deadline at once; only goroutines out of control (not a test function
// that departed) make a timer wait for real time (vGrace). A clip runs on
// it only with RACEKIT_SCHED_TIME=virtual, which hatch sets for clips of
// random-scheduler recordings.
//
// TREE can run in the writer (filter.go, RACEKIT_FILTER=tree).
package rt

//go:generate go run mkatomic.go
