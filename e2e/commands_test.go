package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var racekitBin struct {
	once sync.Once
	path string
	err  error
	dir  string
}

// racekit builds the racekit command once.
func racekit(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds racekit and instrumented programs")
	}
	racekitBin.once.Do(func() {
		racekitBin.dir, racekitBin.err = os.MkdirTemp("", "racekit-bin-")
		if racekitBin.err != nil {
			return
		}
		racekitBin.path = filepath.Join(racekitBin.dir, "racekit")
		out, err := exec.Command("go", "build", "-o", racekitBin.path, "github.com/racekit/racekit/cmd/racekit").CombinedOutput()
		if err != nil {
			racekitBin.err = err
			t.Logf("%s", out)
		}
	})
	if racekitBin.err != nil {
		t.Fatal(racekitBin.err)
	}
	return racekitBin.path
}

// runRacekit runs racekit in testdata/src and returns its exit code and
// combined output.
func runRacekit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(racekit(t), args...)
	cmd.Dir = "testdata/src"
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestRunCommand checks racekit run's report and exit status: 66 for a
// racy program that exits 0, 0 for a race-free one, the program's own code
// otherwise.
func TestRunCommand(t *testing.T) {
	for _, tc := range []struct {
		pkg  string
		code int
	}{
		{"counter", 66},
		{"mutex", 0},
		{"exitcode", 3},
		{"panicker", 2},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			races := marked(t, tc.pkg)
			code, out := runRacekit(t, "run", "./"+tc.pkg)
			if code != tc.code {
				t.Errorf("exit status %d, want %d\n%s", code, tc.code, out)
			}
			if got := strings.Contains(out, "WARNING: DATA RACE"); got != (len(races) > 0) {
				t.Errorf("race report present: %v, want %v\n%s", got, len(races) > 0, out)
			}
			for _, r := range races {
				if !strings.Contains(out, r) {
					t.Errorf("report does not name %s\n%s", r, out)
				}
			}
			if strings.Contains(out, "warning") {
				t.Errorf("unexpected warning\n%s", out)
			}
		})
	}
}

// TestRunPredict: the run of testdata/src/predicted shows no race; with
// --predict racekit reports the race another interleaving would show,
// labelled as predicted, at the two lines marked "predicted:".
func TestRunPredict(t *testing.T) {
	code, out := runRacekit(t, "run", "./predicted")
	if code != 0 || strings.Contains(out, "WARNING: DATA RACE") {
		t.Fatalf("without --predict: exit %d, want 0 and no race\n%s", code, out)
	}
	code, out = runRacekit(t, "run", "--predict", "./predicted")
	if code != 66 || !strings.Contains(out, "WARNING: DATA RACE (predicted by rdit)") {
		t.Fatalf("with --predict: exit %d, want 66 and a predicted race\n%s", code, out)
	}
	if strings.Contains(out, "observed by") {
		t.Errorf("an observed race reported\n%s", out)
	}
	files, _ := filepath.Glob("testdata/src/predicted/*.go")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "// predicted:") {
				if want := "predicted/main.go:" + strconv.Itoa(i+1); !strings.Contains(out, want) {
					t.Errorf("report does not name %s\n%s", want, out)
				}
			}
		}
	}
}

// TestRunSignal sends SIGTERM to racekit run: the program (which does not
// handle it) is terminated, its trace finished on the way, and its race
// reported.
func TestRunSignal(t *testing.T) {
	cmd := exec.Command(racekit(t), "run", "./sigwait")
	cmd.Dir = "testdata/src"
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the program never got ready")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Errorf("racekit run ended with %v, want exit status 1", err)
	}
	out := stderr.String()
	for _, r := range marked(t, "sigwait") {
		if !strings.Contains(out, r) {
			t.Errorf("race at %s not reported\n%s", r, out)
		}
	}
	if strings.Contains(out, "warning:") {
		t.Errorf("trace not finished\n%s", out)
	}
}

// TestTestCommand checks racekit test: go test's output passes through,
// the race is reported inside its test, which fails, the package's line
// says FAIL, and the exit status is 1.
func TestTestCommand(t *testing.T) {
	code, out := runRacekit(t, "test", "./testpkg", "./testmainpkg")
	if code != 1 {
		t.Errorf("exit status %d, want 1\n%s", code, out)
	}
	for _, want := range append([]string{
		"FAIL\tracekit.test/e2e/testpkg\t",
		"ok  \tracekit.test/e2e/testmainpkg",
		"WARNING: DATA RACE",
		"==================\n--- FAIL: TestRace (racekit: 1 data race)\n    racekit: race detected during execution of test\nFAIL\nFAIL\tracekit.test/e2e/testpkg\t",
		" (racekit: 1 data race(s))\n",
	}, marked(t, "testpkg")...) {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL\tracekit.test/e2e/testmainpkg") {
		t.Errorf("race reported in testmainpkg\n%s", out)
	}
	code, out = runRacekit(t, "test", "./testmainpkg", "--", "-run", "TestAdd", "-v")
	if code != 0 || !strings.Contains(out, "--- PASS: TestAdd") {
		t.Errorf("exit status %d, want 0, with go test's -v output\n%s", code, out)
	}
}

// TestTestGoFlags: racekit test takes go test's command line. -run
// before the packages runs only the test it names (testpkg's race is in
// other tests: none is reported); after them, in the -flag=value form
// with two dashes, with racekit's -stats between, too; a flag neither
// racekit nor go test has is a usage error that says where flags go.
func TestTestGoFlags(t *testing.T) {
	for _, args := range [][]string{
		{"test", "-run", "^TestFirst$", "-v", "./testpkg"},
		{"test", "./testpkg", "--run=^TestFirst$", "-stats", "--v", "-count", "2"},
	} {
		code, out := runRacekit(t, args...)
		if code != 0 || !strings.Contains(out, "--- PASS: TestFirst") || !strings.Contains(out, "ok  \tracekit.test/e2e/testpkg") {
			t.Errorf("racekit %q: exit status %d, want 0, with TestFirst's -v output\n%s", args, code, out)
		}
		for _, other := range []string{"TestSecond", "TestSubtests", "TestParallel", "TestExternal", "WARNING: DATA RACE"} {
			if strings.Contains(out, other) {
				t.Errorf("racekit %q: output has %s: more than TestFirst ran\n%s", args, other, out)
			}
		}
		if want := strings.Contains(strings.Join(args, " "), "-count"); want != (strings.Count(out, "--- PASS: TestFirst") == 2) {
			t.Errorf("racekit %q: TestFirst ran %d times\n%s", args, strings.Count(out, "--- PASS: TestFirst"), out)
		}
		if strings.Contains(strings.Join(args, " "), "-stats") && !strings.Contains(out, "racekit test: instrumented") {
			t.Errorf("racekit %q: no -stats line\n%s", args, out)
		}
	}
	code, out := runRacekit(t, "test", "-foo", "./testpkg")
	if code != 2 || !strings.Contains(out, "racekit test: unknown flag -foo; go test flags go anywhere") {
		t.Errorf("racekit test -foo: exit status %d, want 2 and the flag rule\n%s", code, out)
	}
}

// marked returns "dir/file:line" for each line of the program in dir that
// carries a race mark.
func marked(t *testing.T, dir string) []string {
	var out []string
	files, _ := filepath.Glob(filepath.Join("testdata/src", dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "// race:") {
				out = append(out, dir+"/"+filepath.Base(f)+":"+strconv.Itoa(i+1))
			}
		}
	}
	return out
}
