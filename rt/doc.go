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
//	RACEKIT_SIGNALS=1       on SIGINT/SIGTERM, finish the trace and die by
//	                        the signal (unless the program handles it)
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
// runtime.Stack (slow, correct).
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
// Every event takes one mutex, gets the next sequence number and is encoded
// into the writer's block while the mutex is held, so Seq is the order in
// which events were recorded. The hooks record a release before the real
// operation (Unlock, channel send, WaitGroup Done, close) and an acquire
// after it returns (Lock, receive, Wait), so a release always gets a smaller
// Seq than the acquire it enables. sync/atomic operations are performed
// while the mutex is held, so the order of the recorded atomic events is the
// order of the operations themselves.
//
// # Flushing
//
// Blocks of 64 KiB go to the file as they fill; a timer writes a partial
// block 100ms after the first unflushed event, so a killed run leaves a
// readable prefix. The trace is finished (end block written) when main
// returns or panics, on Exit (instrumented calls of os.Exit), at the end of
// an instrumented TestMain, and on SIGINT/SIGTERM when RACEKIT_SIGNALS is
// set. A goroutine that ends by a panic flushes first.
//
// rt never panics into user code: an I/O error stops tracing with one
// message on stderr.
//go:generate go run mkatomic.go

package rt
