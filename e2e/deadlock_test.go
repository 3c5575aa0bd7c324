package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/report/sarif/sariftest"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// TestDeadlockPrediction: on testdata/src/lockorder's recorded run, which
// did not deadlock, iGoodlock predicts exactly one lock-order cycle: main's
// transfer(a, b) against the second goroutine's transfer(b, a), both
// waiting at the inner Lock; not the first goroutine's (ordered by
// wg.Wait) nor the guarded transfers (a common lock).
func TestDeadlockPrediction(t *testing.T) {
	cycles, m := recordedDeadlocks(t, "lockorder")
	if len(cycles) != 1 || len(cycles[0].Deps) != 2 {
		t.Fatalf("%d cycles, want 1 of 2 goroutines: %+v", len(cycles), cycles)
	}
	for _, dep := range cycles[0].Deps {
		s := m.Site(dep.Site)
		if !strings.HasSuffix(s.File, "lockorder/main.go") || s.Line != 24 || len(dep.Held) != 1 || m.Site(dep.Held[0].Site).Line != 22 {
			t.Errorf("dependency at %v holding %+v, want the inner Lock at main.go:24 holding the lock of main.go:22", s, dep.Held)
		}
	}
	if cycles[0].Deps[0].G == cycles[0].Deps[1].G {
		t.Errorf("one goroutine both ways")
	}
}

// TestTestDeadlocks: racekit test --deadlocks reports the lock-order
// cycle of testdata/src/lockordertest like a race, fails the package and
// counts it on the FAIL line; without --deadlocks the package passes.
// racekit run --deadlocks reports lockorder's cycle and exits 66.
func TestTestDeadlocks(t *testing.T) {
	code, out := runRacekit(t, "test", "./lockordertest")
	if code != 0 || strings.Contains(out, "DEADLOCK") {
		t.Fatalf("without --deadlocks: exit %d, want 0 and no report\n%s", code, out)
	}
	code, out = runRacekit(t, "test", "--deadlocks", "./lockordertest")
	for _, want := range []string{"WARNING: POTENTIAL DEADLOCK", "lockordertest.transfer()", "bank_test.go:22:", "racekit: 1 potential deadlock(s)", "(racekit: 0 data race(s), 1 potential deadlock(s))"} {
		if !strings.Contains(out, want) {
			t.Errorf("test --deadlocks: output lacks %q\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("test --deadlocks: exit %d, want 1", code)
	}
	code, out = runRacekit(t, "run", "--deadlocks", "./lockorder")
	if code != 66 || !strings.Contains(out, "WARNING: POTENTIAL DEADLOCK") || !strings.Contains(out, "Found 1 potential deadlock(s)") {
		t.Errorf("run --deadlocks: exit %d, want 66 and one cycle\n%s", code, out)
	}
}

// TestRecursiveReadLock: testdata/src/rwrecursive read-locks its store
// twice in one goroutine (sum, then get) while another goroutine's Lock
// is unordered with the second RLock: one RWMutex read-write-read.
func TestRecursiveReadLock(t *testing.T) {
	cycles, m := recordedDeadlocks(t, "rwrecursive")
	if len(cycles) != 1 || cycles[0].Kind != deadlock.RecursiveRead {
		t.Fatalf("%d findings, want one read-write-read: %+v", len(cycles), cycles)
	}
	r, w := cycles[0].Deps[0], cycles[0].Deps[1]
	if m.Site(r.Site).Line != 20 || m.Site(w.Site).Line != 36 || r.G == w.G {
		t.Errorf("second RLock at %v, Lock at %v; want main.go:20 and main.go:36 in two goroutines", m.Site(r.Site), m.Site(w.Site))
	}
}

// recordedDeadlocks runs testdata/src's program (which exits 0) and
// returns the cycles detect/deadlock finds in its trace.
func recordedDeadlocks(t *testing.T, program string) ([]deadlock.Cycle, *trace.Meta) {
	t.Helper()
	bins, _ := buildAll(t)
	f, err := tracefile.Open(runProgram(t, filepath.Join(bins, program), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := deadlock.New(deadlock.Options{})
	if _, err := detect.Run(f, d); err != nil {
		t.Fatal(err)
	}
	return d.Cycles(), f.Meta()
}

// TestLeaks: racekit leaks on a recorded run of testdata/src/leaky reports
// its two goroutines blocked forever, at their operations, and nothing on
// a run whose goroutines all end (chanhandoff); --leaks adds the same to
// racekit run and test (testdata/src/leakytest).
func TestLeaks(t *testing.T) {
	dir := t.TempDir()
	if code, out := runRacekit(t, "run", "-keep-trace", dir, "./leaky"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	code, out := runRacekit(t, "leaks", filepath.Join(dir, "trace.rkt"))
	for _, want := range []string{"blocked in chan send", "leaky/main.go:13:", "send on the channel made at", "leaky/main.go:19 (", "blocked in chan receive", "leaky/main.go:25:", "leaky/main.go:24 (", "Found 2 leaked goroutine(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("leaks: output lacks %q\n%s", want, out)
		}
	}
	if code != 66 {
		t.Errorf("leaks: exit %d, want 66", code)
	}
	clean := t.TempDir()
	if code, out := runRacekit(t, "run", "-keep-trace", clean, "./chanhandoff"); code != 0 && code != 66 {
		t.Fatalf("run chanhandoff: exit %d\n%s", code, out)
	}
	if code, out := runRacekit(t, "leaks", filepath.Join(clean, "trace.rkt")); code != 0 || strings.Contains(out, "LEAK") {
		t.Errorf("leaks on chanhandoff: exit %d, want 0 and nothing\n%s", code, out)
	}

	// --leaks on run and test: the same report, and the run or the
	// package fails; without it, nothing.
	code, out = runRacekit(t, "run", "--leaks", "./leaky")
	if code != 66 || !strings.Contains(out, "Found 2 leaked goroutine(s)") {
		t.Errorf("run --leaks: exit %d, want 66 and two leaks\n%s", code, out)
	}
	code, out = runRacekit(t, "test", "./leakytest")
	if code != 0 || strings.Contains(out, "LEAK") {
		t.Errorf("test without --leaks: exit %d, want 0 and no report\n%s", code, out)
	}
	code, out = runRacekit(t, "test", "--leaks", "./leakytest")
	for _, want := range []string{"WARNING: GOROUTINE LEAK (blocked in chan send", "leakytest/leak_test.go:18:", "(racekit: 0 data race(s), 1 leaked goroutine(s))"} {
		if !strings.Contains(out, want) {
			t.Errorf("test --leaks: output lacks %q\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("test --leaks: exit %d, want 1", code)
	}
	// A known leak ignored by a function of its stack (here the
	// goroutine's own); another function ignores nothing.
	code, out = runRacekit(t, "test", "--leaks", "--leaks-ignore", "racekit.test/e2e/leakytest.TestLeaky.func1", "./leakytest")
	if code != 0 || strings.Contains(out, "LEAK") {
		t.Errorf("test --leaks --leaks-ignore: exit %d, want 0 and no report\n%s", code, out)
	}
	code, out = runRacekit(t, "test", "--leaks", "--leaks-ignore", "racekit.test/e2e/leakytest.compute", "./leakytest")
	if code != 1 || !strings.Contains(out, "GOROUTINE LEAK") {
		t.Errorf("test --leaks --leaks-ignore of a function not on the stack: exit %d, want 1 and the leak\n%s", code, out)
	}
}

// TestStall: racekit test reports a test whose goroutines are all blocked
// on each other at once (rt's stall watch, issue 30 item 3), with each
// blocked goroutine, what it waits for and the locks it holds, and fails
// the package; waits that a timer, a sleeping goroutine, an AfterFunc, a
// context's deadline or a ticker ends are not stalls
// (testdata/src/stucktest).
func TestStall(t *testing.T) {
	code, out := runRacekit(t, "test", "-v", "-run", "Wakes", "./stucktest")
	if code != 0 || strings.Contains(out, "DEADLOCK") || strings.Count(out, "--- PASS") != 5 {
		t.Errorf("test -run Wakes: exit %d, want 0, five passes and no deadlock\n%s", code, out)
	}
	for _, c := range []struct {
		test string
		want []string
	}{
		{"TestStuck", []string{
			"blocked to receive from the channel made at", "stucktest/stuck_test.go:55:",
			"holding lock 0x", "stucktest/stuck_test.go:49:",
			"blocked in sync.Mutex.Lock of lock 0x", "stucktest/stuck_test.go:51:",
		}},
		{"TestStuckWaitGroup", []string{"blocked in sync.WaitGroup.Wait of WaitGroup 0x", "stucktest/stuck_test.go:91:"}},
		{"TestStuckCond", []string{"blocked in sync.Cond.Wait of Cond 0x", "stucktest/stuck_test.go:107:"}},
	} {
		code, out := runRacekit(t, "test", "-run", c.test+"$", "./stucktest")
		want := append([]string{
			"racekit: all goroutines are asleep - deadlock! (running tests: " + c.test + ";",
			"WARNING: DEADLOCK in " + c.test + " (every goroutine is blocked",
			"(racekit: 0 data race(s), deadlocked)",
		}, c.want...)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("test -run %s: output lacks %q\n%s", c.test, w, out)
			}
		}
		if code != 1 || strings.Contains(out, "test timed out") {
			t.Errorf("test -run %s: exit %d, want 1, before the -timeout alarm\n%s", c.test, code, out)
		}
	}
	// With -json the stalled test, which never ended, fails.
	_, out = runRacekit(t, "test", "-json", "-run", "TestStuck$", "./stucktest")
	if !strings.Contains(out, `"Action":"fail","Package":"racekit.test/e2e/stucktest","Test":"TestStuck"`) {
		t.Errorf("test -json: no fail event for TestStuck\n%s", out)
	}
}

// TestFuzzDeadlocks: racekit fuzz -deadlocks predicts lockordertest's
// cycle on a recorded run (which never deadlocks: one goroutine sleeps
// first) and makes it happen with DeadlockFuzzer in every run, each
// goroutine blocked at the inner Lock; the replay command it prints
// deadlocks again from the seed.
func TestFuzzDeadlocks(t *testing.T) {
	code, out := runRacekit(t, "fuzz", "-deadlocks", "-q", "-runs", "4", "-explore", "0", "-j", "2", "./lockordertest")
	for _, want := range []string{"DEADLOCK (confirmed: 4 of 4 runs deadlocked)", "requests the lock at lockordertest/bank_test.go:22", "lock lockordertest/bank_test.go:22", "racekit fuzz: 1 lock-order cycle(s), 1 confirmed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	if code != 66 {
		t.Errorf("exit %d, want 66\n%s", code, out)
	}
	args := replayArgs(t, out)
	_, out = runRacekit(t, args...)
	if !strings.Contains(out, "racekit replay: the cycle deadlocked") {
		t.Errorf("racekit %s: the cycle did not deadlock\n%s", strings.Join(args, " "), out)
	}
}

// TestFuzzExplore: waitdrain's TestCollect deadlocks (a WaitGroup.Wait
// before the channel its workers send on is drained) only when a monitor
// that sleeps 20ms flags an error before the collector checks: no plain
// run does, and no lock-order cycle names it. fuzz -deadlocks' exploration
// under random delays makes it happen, with the Wait and the three sends
// blocked, drawn by -html, and its replay command deadlocks again from the seed. The
// control of the same shape (drain, then wait; a Cond handshake under its
// lock) never deadlocks and leaves no goroutine blocked. TestGiveUp's
// leak is made to happen and replayed too.
func TestFuzzExplore(t *testing.T) {
	html := t.TempDir()
	code, out := runRacekit(t, "fuzz", "-deadlocks", "-q", "-explore", "8", "-j", "2", "-html", html, "-run", "TestCollect$", "./waitdrain")
	for _, want := range []string{"runs deadlocked under random delays)", "wait waitdrain/waitdrain_test.go:29", "send waitdrain/waitdrain_test.go:25 (parked)", "(the first seed's run, made again, deadlocked the same way)", "racekit fuzz: 1 deadlock(s) and 0 leak(s) made to happen in 8 run(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	if code != 66 {
		t.Errorf("exit %d, want 66\n%s", code, out)
	}
	// -html draws the deadlocked run: its last steps, then the Wait and
	// the three sends, each goroutine in its lane.
	page, err := os.ReadFile(filepath.Join(html, "clip-001-deadlock.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "send (blocked)"); n != 3 || !strings.Contains(string(page), "wait (blocked)") {
		t.Errorf("the page has %d blocked sends, want 3 and the blocked wait\n%s", n, page)
	}
	if _, err := os.Stat(filepath.Join(html, "index.html")); err != nil {
		t.Error(err)
	}
	args := replayArgs(t, out)
	_, rout := runRacekit(t, args...)
	if !strings.Contains(rout, "racekit replay: the run deadlocked: send waitdrain/waitdrain_test.go:25 (parked)") {
		t.Errorf("racekit %s: the run did not deadlock\n%s", strings.Join(args, " "), rout)
	}
	// TestGiveUp's worker sends after its caller gave up: a leak, replayed
	// from its seed with the blocked send.
	code, out = runRacekit(t, "fuzz", "-deadlocks", "-q", "-explore", "4", "-j", "2", "-run", "TestGiveUp$", "./waitdrain")
	for _, want := range []string{"GOROUTINE LEAK (confirmed: ", "blocked in chan send at waitdrain/waitdrain_test.go:109:10", "racekit fuzz: 0 deadlock(s) and 1 leak(s) made to happen in 4 run(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("TestGiveUp: output lacks %q\n%s", want, out)
		}
	}
	if code != 66 {
		t.Errorf("TestGiveUp: exit %d, want 66\n%s", code, out)
	}
	args = replayArgs(t, out)
	if _, rout = runRacekit(t, args...); !strings.Contains(rout, "racekit replay: the run left 1 goroutine(s) blocked when it ended: chan send at waitdrain/waitdrain_test.go:109:10") {
		t.Errorf("racekit %s: the leak did not replay\n%s", strings.Join(args, " "), rout)
	}
	code, out = runRacekit(t, "fuzz", "-deadlocks", "-q", "-explore", "16", "-j", "2", "-run", "TestControl$", "./waitdrain")
	if code != 0 || !strings.Contains(out, "racekit fuzz: 0 deadlock(s) and 0 leak(s) made to happen in 16 run(s)") {
		t.Errorf("control: exit %d, want 0 and no deadlock\n%s", code, out)
	}
}

// TestConfirmExplore: racekit test -confirm -deadlocks explores each
// package under random delays as fuzz -deadlocks does: TestCollect's
// deadlock is made to happen, with a replay command that keeps go test's
// -run, and fails the command; TestGiveUp's leak is reported only with
// -leaks.
func TestConfirmExplore(t *testing.T) {
	code, out := runRacekit(t, "test", "-confirm", "-deadlocks", "-confirm-runs", "4", "-run", "TestCollect$", "./waitdrain")
	for _, want := range []string{"runs deadlocked under random delays)", "wait waitdrain/waitdrain_test.go:29", "-delays racekit.test/e2e/waitdrain -- -run 'TestCollect$'"} {
		if !strings.Contains(out, want) {
			t.Errorf("TestCollect: output lacks %q\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("TestCollect: exit %d, want 1\n%s", code, out)
	}
	code, out = runRacekit(t, "test", "-confirm", "-deadlocks", "-confirm-runs", "4", "-run", "TestGiveUp$", "./waitdrain")
	if code != 0 || strings.Contains(out, "LEAK") {
		t.Errorf("TestGiveUp without -leaks: exit %d, want 0 and no leak\n%s", code, out)
	}
	code, out = runRacekit(t, "test", "-confirm", "-deadlocks", "-leaks", "-confirm-runs", "4", "-run", "TestGiveUp$", "./waitdrain")
	if code != 1 || !strings.Contains(out, "GOROUTINE LEAK (confirmed: ") || !strings.Contains(out, "blocked in chan send at waitdrain/waitdrain_test.go:109:10") {
		t.Errorf("TestGiveUp with -leaks: exit %d, want 1 and the leak\n%s", code, out)
	}
}

// TestSARIFBlocking: racekit test -sarif writes --leaks' leaks and
// --deadlocks' predicted cycles beside the races, under rules of their
// own, at the blocked operation, in a log the SARIF 2.1.0 schema accepts.
func TestSARIFBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blocking.sarif")
	runRacekit(t, "test", "-deadlocks", "-leaks", "-sarif", path, "./leakytest", "./lockordertest")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sariftest.Validate(doc); err != nil {
		t.Errorf("invalid SARIF: %v\n%s", err, doc)
	}
	for _, want := range []string{`"ruleId": "goroutine-leak"`, `blocked in chan send when the run ended."`, `"uri": "leakytest/leak_test.go"`,
		`"ruleId": "deadlock"`, `"Potential deadlock: a lock-order cycle between`, `"uri": "lockordertest/bank_test.go"`, `"verdict": "predicted"`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the log lacks %s\n%s", want, doc)
		}
	}
}

// TestFuzzAtomicity: racekit fuzz -atomicity finds checkact's Buy, whose
// check and act take the shop's lock in turn, on a recorded run (the late
// buyer sees the item gone: no race, nothing PECAN predicts), and
// AtomFuzzer makes the interleaving in every run: the test fails with its
// own message, and the replay command it prints fails the same way.
// SafeShop's Buy, whose act checks again, is interleaved as often and
// never fails: not confirmed (its runs run its test alone, so the other
// test's failure is not counted against it).
func TestFuzzAtomicity(t *testing.T) {
	code, out := runRacekit(t, "fuzz", "-atomicity", "-q", "-runs", "4", "-j", "2", "./checkact")
	for _, want := range []string{"ATOMICITY VIOLATION (confirmed: 4 of 4 runs interleaved the region and failed)", "in one invocation of racekit.test/e2e/checkact.(*Shop).Buy, a lock taken at checkact/shop.go:19, released, and taken again at checkact/shop.go:25", "shop_test.go:24: oversold: -1", "SPLIT REGION 2 (interleaved in 4 of 4 runs; the tests passed", "(*SafeShop).Buy", "racekit fuzz: 2 split region(s), 1 confirmed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	if code != 66 {
		t.Errorf("exit %d, want 66\n%s", code, out)
	}
	args := replayArgs(t, out)
	_, out = runRacekit(t, args...)
	for _, want := range []string{"racekit replay: the region was interleaved: g0.2 took the lock at checkact/shop.go:19", "oversold: -1"} {
		if !strings.Contains(out, want) {
			t.Errorf("racekit %s: output lacks %q\n%s", strings.Join(args, " "), want, out)
		}
	}
}

// replayArgs is the racekit command line of the "Replay: racekit replay
// ..." line of out (its single quotes removed).
func replayArgs(t *testing.T, out string) []string {
	t.Helper()
	i := strings.Index(out, "Replay: racekit replay ")
	if i < 0 {
		t.Fatalf("no replay command\n%s", out)
	}
	line := out[i+len("Replay: racekit "):]
	line = line[:strings.IndexByte(line, '\n')]
	var args []string
	for _, f := range strings.Fields(line) {
		args = append(args, strings.Trim(f, "'"))
	}
	return args
}
