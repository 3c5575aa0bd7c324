package gotestline

import (
	"errors"
	"flag"
	"io"
	"os/exec"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// testFlagSet has flags of the kinds racekit test defines: values (-algo,
// -keep-trace, -tags, go's -tags with go's meaning) and booleans (-stats,
// -predict).
func testFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("algo", "fasttrack", "")
	fs.String("keep-trace", "", "")
	fs.String("tags", "", "")
	fs.Bool("stats", false, "")
	fs.Bool("predict", false, "")
	return fs
}

// runsFlags are flags of the kinds racekit fuzz, hatch and replay define:
// go's -tags and -timeout with go's meaning, their own -json, -use-trace
// (once -trace, which go test has).
var runsFlags = OwnFlags{"tags": false, "timeout": false, "json": true, "use-trace": false, "stats": true}

// TestFromFlagSet: a flag set's flags, booleans told apart.
func TestFromFlagSet(t *testing.T) {
	want := OwnFlags{"algo": false, "keep-trace": false, "tags": false, "stats": true, "predict": true}
	if got := FromFlagSet(testFlagSet()); !reflect.DeepEqual(got, want) {
		t.Errorf("FromFlagSet = %v, want %v", got, want)
	}
}

// TestSplit: racekit test's command line is go test's plus racekit's
// flags, in every form go test accepts.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		own  []string // racekit's flags
		pkgs []string
		goT  []string // GoTestArgs: what go test gets after the packages
		has  []string // go flags Has must report
	}{
		{"flag before packages", []string{"-run", "TestX", "./p"}, nil, []string{"./p"}, []string{"-run", "TestX"}, []string{"run"}},
		{"flag after packages", []string{"./p", "-run", "TestX"}, nil, []string{"./p"}, []string{"-run", "TestX"}, []string{"run"}},
		{"= form", []string{"-run=TestX", "./p", "./q"}, nil, []string{"./p", "./q"}, []string{"-run=TestX"}, []string{"run"}},
		{"double dash", []string{"--run", "TestX", "--count=2", "./p"}, nil, []string{"./p"}, []string{"--run", "TestX", "--count=2"}, []string{"run", "count"}},
		{"boolean -v takes no value", []string{"-v", "./p"}, nil, []string{"./p"}, []string{"-v"}, []string{"v"}},
		{"boolean with =", []string{"-v=false", "./p"}, nil, []string{"./p"}, []string{"-v=false"}, []string{"v"}},
		{"value flags after packages", []string{"./p", "-v", "-count", "3", "-timeout", "30s"}, nil, []string{"./p"}, []string{"-v", "-count", "3", "-timeout", "30s"}, []string{"v", "count", "timeout"}},
		{"racekit's flags anywhere", []string{"-algo=hb", "./p", "-stats", "-run", "X", "--keep-trace", "/tmp/k"}, []string{"-algo=hb", "-stats", "-keep-trace=/tmp/k"}, []string{"./p"}, []string{"-run", "X"}, []string{"run"}},
		{"racekit's value flag with a separate value", []string{"-algo", "hb", "./p"}, []string{"-algo=hb"}, []string{"./p"}, nil, nil},
		{"-tags is racekit's too", []string{"-tags", "integration", "./p"}, []string{"-tags=integration"}, []string{"./p"}, nil, nil},
		{"-- before go flags", []string{"./p", "--", "-run", "TestX", "-v"}, nil, []string{"./p"}, []string{"-run", "TestX", "-v"}, []string{"run", "v"}},
		{"-args", []string{"./p", "-run", "X", "-args", "-update", "x"}, nil, []string{"./p"}, []string{"-run", "X", "-args", "-update", "x"}, []string{"run"}},
		{"--args", []string{"--args", "-v"}, nil, []string{"."}, []string{"-args", "-v"}, nil},
		{"positional after flags goes to the binary", []string{"./p", "-v", "./q", "-run", "X"}, nil, []string{"./p"}, []string{"-v", "-args", "./q", "-run", "X"}, []string{"v"}},
		{"-test. prefix", []string{"-test.v", "-test.run=X", "./p"}, nil, []string{"./p"}, []string{"-test.v", "-test.run=X"}, []string{"v", "run"}},
		{"unknown -test. flag passed on", []string{"./p", "-test.paniconexit0"}, nil, []string{"./p"}, []string{"-test.paniconexit0"}, nil},
		{"-race dropped", []string{"-race", "./p", "-short"}, nil, []string{"./p"}, []string{"-short"}, []string{"short"}},
		{"build and go test flags", []string{"-json", "-gcflags=all=-N", "-coverprofile", "c.out", "./p"}, nil, []string{"./p"}, []string{"-json", "-gcflags=all=-N", "-coverprofile", "c.out"}, []string{"json", "gcflags", "coverprofile"}},
		{"no packages", nil, nil, []string{"."}, nil, nil},
		{"no packages, flags only", []string{"-run", "X"}, nil, []string{"."}, []string{"-run", "X"}, []string{"run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := testFlagSet()
			l, err := Split("test", FromFlagSet(fs), All, tc.args)
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			if !reflect.DeepEqual(l.Own, tc.own) || !reflect.DeepEqual(l.Packages, tc.pkgs) || !reflect.DeepEqual(l.GoTestArgs(), tc.goT) {
				t.Errorf("%q:\nown %q, packages %q, go test %q\nwant own %q, packages %q, go test %q", tc.args, l.Own, l.Packages, l.GoTestArgs(), tc.own, tc.pkgs, tc.goT)
			}
			for _, n := range tc.has {
				if !l.Has(n) {
					t.Errorf("%q: Has(%q) = false", tc.args, n)
				}
			}
			if len(tc.has) == 0 && len(l.flags) > 0 && tc.name != "unknown -test. flag passed on" {
				t.Errorf("%q: go flags %+v, want none", tc.args, l.flags)
			}
			// The command's part parses with its own flags.
			if err := fs.Parse(l.Own); err != nil || fs.NArg() != 0 {
				t.Errorf("own flags %q: %v, %d left", l.Own, err, fs.NArg())
			}
		})
	}
}

// TestLineValues: Value is the last one given, as go takes it; Chatty
// follows the last -v; GoTestArgs leaves out the flags it is told to.
func TestLineValues(t *testing.T) {
	l, err := Split("test", nil, All, []string{"-vet=atomic", "./p", "-v", "-toolexec", "env", "-vet=off", "-v=false"})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := l.Value("vet"); v != "off" || !ok {
		t.Errorf("Value(vet) = %q, %v", v, ok)
	}
	if v, ok := l.Value("run"); v != "" || ok {
		t.Errorf("Value(run) = %q, %v", v, ok)
	}
	if l.Chatty() {
		t.Error("-v then -v=false: Chatty")
	}
	if want := []string{"-vet=atomic", "-v", "-vet=off", "-v=false"}; !reflect.DeepEqual(l.GoTestArgs("toolexec"), want) {
		t.Errorf("GoTestArgs(toolexec) = %q, want %q", l.GoTestArgs("toolexec"), want)
	}
	for args, want := range map[string]bool{"-v": true, "-v=true": true, "-test.v=test2json": true, "-json": false} {
		l, err := Split("test", nil, All, []string{args})
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if l.Chatty() != want {
			t.Errorf("%s: Chatty %v, want %v", args, l.Chatty(), want)
		}
	}
}

// TestSplitErrors: a wrong flag is answered with the right form.
func TestSplitErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in the message
	}{
		{[]string{"-foo", "./p"}, []string{"unknown flag -foo", "go test flags go anywhere", "'racekit help test'", "after -args"}},
		{[]string{"./p", "--foo=1"}, []string{"unknown flag -foo"}},
		{[]string{"./p", "-run"}, []string{"flag needs an argument: -run"}},
		{[]string{"-algo"}, []string{"flag needs an argument: -algo"}},
		{[]string{"-overlay", "o.json", "./p"}, []string{"-overlay cannot be used", "its own -overlay"}},
		{[]string{"-modfile=x.mod"}, []string{"-modfile cannot be used"}},
		{[]string{"---v"}, []string{"bad flag syntax: ---v"}},
		{[]string{"-test.json"}, []string{"unknown flag -test.json"}},
	} {
		_, err := Split("test", FromFlagSet(testFlagSet()), All, tc.args)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: error %v, want a usage error", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %q lacks %q", tc.args, err, w)
			}
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		if _, err := Split("test", FromFlagSet(testFlagSet()), All, []string{"./p", h}); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %v, want flag.ErrHelp", h, err)
		}
	}
}

// TestSplitRuns: fuzz, hatch and replay run the test binary themselves:
// go test's flags become the binary's (-run X: -test.run=X), -timeout and
// -json are their own, and a flag that makes no sense for each of many
// runs is refused, naming what is taken.
func TestSplitRuns(t *testing.T) {
	l, err := Split("fuzz", runsFlags, Runs, []string{"-run", "^TestX$", "./p", "-v", "-count=3", "-test.short", "-timeout", "5s", "-json", "-use-trace", "t.rkt", "-args", "-myflag", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-test.run=^TestX$", "-test.v", "-test.count=3", "-test.short", "-myflag", "x"}; !reflect.DeepEqual(l.BinaryArgs(), want) {
		t.Errorf("BinaryArgs = %q, want %q", l.BinaryArgs(), want)
	}
	if want := []string{"-timeout=5s", "-json", "-use-trace=t.rkt"}; !reflect.DeepEqual(l.Own, want) {
		t.Errorf("Own = %q, want %q", l.Own, want)
	}
	if !reflect.DeepEqual(l.Packages, []string{"./p"}) {
		t.Errorf("packages %q", l.Packages)
	}
	for _, tc := range []struct {
		cmd  string
		args []string
		want []string
	}{
		{"fuzz", []string{"-cpuprofile", "c.out", "./p"}, []string{"go test's -cpuprofile does not apply", "racekit fuzz builds the test binary and runs it itself", "-run, -short, -shuffle, -skip", "-tags", "-timeout"}},
		{"hatch", []string{"./p", "-gcflags=-N"}, []string{"go test's -gcflags does not apply"}},
		{"hatch", []string{"-trace", "t.rkt", "./p"}, []string{"go test's -trace does not apply", "racekit's -trace is now -use-trace"}},
		{"replay", []string{"-test.paniconexit0", "./p"}, []string{"-test.paniconexit0 does not apply"}},
		{"replay", []string{"-nosuch", "./p"}, []string{"unknown flag -nosuch", "'racekit help replay'"}},
	} {
		_, err := Split(tc.cmd, runsFlags, Runs, tc.args)
		if err == nil {
			t.Errorf("%s %q: no error", tc.cmd, tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: %q lacks %q", tc.cmd, tc.args, err, w)
			}
		}
	}
}

// TestPerRunFlags: -tags and -timeout are listed when the command defines
// them.
func TestPerRunFlags(t *testing.T) {
	all := strings.Join(PerRunFlags(runsFlags), ", ")
	none := strings.Join(PerRunFlags(nil), ", ")
	if want := "-count, -cpu, -failfast, -fullpath, -list, -parallel, -run, -short, -shuffle, -skip, -tags, -timeout, -v"; all != want {
		t.Errorf("PerRunFlags = %s, want %s", all, want)
	}
	if strings.Contains(none, "-tags") || strings.Contains(none, "-timeout") {
		t.Errorf("PerRunFlags(nil) = %s", none)
	}
}

// TestGoFlagsTable: every flag the go command documents for go test
// (go help testflag, go help test, go help build) is in goFlags.
func TestGoFlagsTable(t *testing.T) {
	re := regexp.MustCompile(`(?m)^\t-([A-Za-z][A-Za-z0-9.]*)`)
	seen := map[string]bool{}
	for _, topic := range []string{"testflag", "test", "build"} {
		out, err := exec.Command("go", "help", topic).Output()
		if err != nil {
			t.Fatalf("go help %s: %v", topic, err)
		}
		for _, m := range re.FindAllStringSubmatch(string(out), -1) {
			seen[m[1]] = true
		}
	}
	if len(seen) < 50 {
		t.Fatalf("only %d flags in go help's text: its format changed?", len(seen))
	}
	var missing []string
	for name := range seen {
		if !IsGoFlag(name) {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("go flags missing from goFlags: %v", missing)
	}
}
