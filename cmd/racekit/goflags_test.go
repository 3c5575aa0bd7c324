package main

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

// TestSplitGoTestLine: racekit test's command line is go test's plus
// racekit's flags, in every form go test accepts.
func TestSplitGoTestLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		own  []string // racekit's flags
		pkgs []string
		goT  []string // goTestArgs: what go test gets after the packages
		has  []string // go flags has() must report
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
			l, err := splitGoTestLine("test", cmdTest.flags, goTestAll, tc.args)
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			if !reflect.DeepEqual(l.own, tc.own) || !reflect.DeepEqual(l.pkgs, tc.pkgs) || !reflect.DeepEqual(l.goTestArgs(), tc.goT) {
				t.Errorf("%q:\nown %q, packages %q, go test %q\nwant own %q, packages %q, go test %q", tc.args, l.own, l.pkgs, l.goTestArgs(), tc.own, tc.pkgs, tc.goT)
			}
			for _, n := range tc.has {
				if !l.has(n) {
					t.Errorf("%q: has(%q) = false", tc.args, n)
				}
			}
			if len(tc.has) == 0 && len(l.flags) > 0 && tc.name != "unknown -test. flag passed on" {
				t.Errorf("%q: go flags %+v, want none", tc.args, l.flags)
			}
			// racekit's part parses with the command's own flags.
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			addFrontendFlags(fs)
			addRecordingFlags(&command{flags: fs})
			if err := fs.Parse(l.own); err != nil || fs.NArg() != 0 {
				t.Errorf("own flags %q: %v, %d left", l.own, err, fs.NArg())
			}
		})
	}
}

// TestSplitGoTestLineErrors: a wrong flag is answered with the right form.
func TestSplitGoTestLineErrors(t *testing.T) {
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
		_, err := splitGoTestLine("test", cmdTest.flags, goTestAll, tc.args)
		var ue *flagUsageError
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
		if _, err := splitGoTestLine("test", cmdTest.flags, goTestAll, []string{"./p", h}); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %v, want flag.ErrHelp", h, err)
		}
	}
}

// TestSplitGoTestLineRuns: fuzz, hatch and replay run the test binary
// themselves: go test's flags become the binary's (-run X: -test.run=X),
// -timeout and -json are their own, and a flag that makes no sense for
// each of many runs is refused, naming what is taken.
func TestSplitGoTestLineRuns(t *testing.T) {
	l, err := splitGoTestLine("fuzz", cmdFuzz.flags, goTestRuns, []string{"-run", "^TestX$", "./p", "-v", "-count=3", "-test.short", "-timeout", "5s", "-json", "-use-trace", "t.rkt", "-args", "-myflag", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-test.run=^TestX$", "-test.v", "-test.count=3", "-test.short", "-myflag", "x"}; !reflect.DeepEqual(l.binaryArgs(), want) {
		t.Errorf("binaryArgs = %q, want %q", l.binaryArgs(), want)
	}
	if want := []string{"-timeout=5s", "-json", "-use-trace=t.rkt"}; !reflect.DeepEqual(l.own, want) {
		t.Errorf("own = %q, want %q", l.own, want)
	}
	if !reflect.DeepEqual(l.pkgs, []string{"./p"}) {
		t.Errorf("packages %q", l.pkgs)
	}
	for _, tc := range []struct {
		cmd  *command
		args []string
		want []string
	}{
		{cmdFuzz, []string{"-cpuprofile", "c.out", "./p"}, []string{"go test's -cpuprofile does not apply", "racekit fuzz builds the test binary and runs it itself", "-run, -short, -shuffle, -skip", "-tags", "-timeout"}},
		{cmdHatch, []string{"./p", "-gcflags=-N"}, []string{"go test's -gcflags does not apply"}},
		{cmdHatch, []string{"-trace", "t.rkt", "./p"}, []string{"go test's -trace does not apply", "racekit's -trace is now -use-trace"}},
		{cmdReplay, []string{"-test.paniconexit0", "./p"}, []string{"-test.paniconexit0 does not apply"}},
		{cmdReplay, []string{"-nosuch", "./p"}, []string{"unknown flag -nosuch", "'racekit help replay'"}},
	} {
		_, err := splitGoTestLine(tc.cmd.name, tc.cmd.flags, goTestRuns, tc.args)
		if err == nil {
			t.Errorf("%s %q: no error", tc.cmd.name, tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: %q lacks %q", tc.cmd.name, tc.args, err, w)
			}
		}
	}
}

// TestParseFlagsRenamed: a command that takes no go test flags names the
// new spelling of a renamed racekit flag.
func TestParseFlagsRenamed(t *testing.T) {
	c := &command{name: "x", flags: flag.NewFlagSet("x", flag.ContinueOnError)}
	c.flags.SetOutput(io.Discard)
	addFrontendFlags(c.flags)
	_, err := c.parseFlags([]string{"-v", "./p"})
	if err == nil || !strings.Contains(err.Error(), "unknown flag -v (racekit's -v is now -stats)") || !strings.Contains(err.Error(), "'racekit help x'") {
		t.Errorf("-v: %v", err)
	}
	rest, err := c.parseFlags([]string{"--stats", "./p", "a"})
	if err != nil || !reflect.DeepEqual(rest, []string{"./p", "a"}) || c.flags.Lookup("stats").Value.String() != "true" {
		t.Errorf("--stats ./p a: %q, %v", rest, err)
	}
}

// TestOwnFlagsDoNotCollide: the flags of the commands that take go test's
// command line have names go test and go build do not use, but for the
// ones racekit takes with go's meaning.
func TestOwnFlagsDoNotCollide(t *testing.T) {
	shared := map[goTestMode]map[string]bool{
		// -tags: racekit instruments and builds with the same tags.
		goTestAll: {"tags": true},
		// -timeout: the limit of one run of the test binary; -json: the
		// command's result as JSON (go test's -json, the test binary's
		// output as JSON events, cannot apply to many controlled runs).
		goTestRuns: {"tags": true, "timeout": true, "json": true},
	}
	n := 0
	for _, c := range commands {
		if c.goTest == noGoFlags {
			continue
		}
		n++
		c.flags.VisitAll(func(f *flag.Flag) {
			if _, ok := goFlags[f.Name]; ok && !shared[c.goTest][f.Name] {
				t.Errorf("racekit %s -%s: go test has -%s", c.name, f.Name, f.Name)
			}
			if strings.HasPrefix(f.Name, "test.") {
				t.Errorf("racekit %s -%s: the test binary's prefix", c.name, f.Name)
			}
		})
	}
	if n != 4 {
		t.Errorf("%d commands take go test's command line, want 4 (test, fuzz, hatch, replay)", n)
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
		if _, ok := goFlags[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("go flags missing from goFlags: %v", missing)
	}
}

// TestUsageLinesNameEveryFlag: each command's usage line names every flag
// it defines, spelled as help prints it (-name, one dash), so that the two
// cannot drift apart; help lists each flag as -name.
func TestUsageLinesNameEveryFlag(t *testing.T) {
	doubleDash := regexp.MustCompile(`(^|[\s\[|])--[A-Za-z]`)
	for _, c := range commands {
		if doubleDash.MatchString(c.usageLine) {
			t.Errorf("racekit %s: usage line spells a flag with two dashes: %s", c.name, c.usageLine)
		}
		var help strings.Builder
		c.usage(&help)
		c.flags.VisitAll(func(f *flag.Flag) {
			re := regexp.MustCompile(`(^|[\s\[|])-` + regexp.QuoteMeta(f.Name) + `([\s\]=|]|$)`)
			if !re.MatchString(c.usageLine) {
				t.Errorf("racekit %s: usage line lacks -%s: %s", c.name, f.Name, c.usageLine)
			}
			if !strings.Contains(help.String(), "\n  -"+f.Name+"\n") && !strings.Contains(help.String(), "\n  -"+f.Name+" ") {
				t.Errorf("racekit help %s does not list -%s", c.name, f.Name)
			}
		})
		if strings.Contains(help.String(), "\n  --") {
			t.Errorf("racekit help %s lists a flag with two dashes", c.name)
		}
	}
}
