package main

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/racekit/racekit/gotestline"
)

// TestParseFlagsGoTestLine: a command that takes go test's command line
// hands package gotestline its own flags: racekit's flags, wherever they
// stand, set the command's, and the errors name the command and its flags.
func TestParseFlagsGoTestLine(t *testing.T) {
	c := &command{name: "test", flags: flag.NewFlagSet("test", flag.ContinueOnError), goTest: gotestline.All}
	c.flags.SetOutput(io.Discard)
	ff := addFrontendFlags(c.flags)
	addRecordingFlags(c)
	pkgs, err := c.parseFlags([]string{"-algo=hb", "./p", "-stats", "-run", "X", "--keep-trace", "/tmp/k", "-v", "--schedule", "random"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pkgs, []string{"./p"}) || *ff.algo != "hb" || !*ff.verbose || *ff.keep != "/tmp/k" || c.flags.Lookup("schedule").Value.String() != "random" {
		t.Errorf("packages %q, -algo %q, -stats %v, -keep-trace %q, -schedule %s", pkgs, *ff.algo, *ff.verbose, *ff.keep, c.flags.Lookup("schedule").Value)
	}
	if want := []string{"-run", "X", "-v"}; !reflect.DeepEqual(c.line.GoTestArgs(), want) || !c.line.Chatty() {
		t.Errorf("go test %q (chatty %v), want %q", c.line.GoTestArgs(), c.line.Chatty(), want)
	}
	for _, tc := range []struct {
		cmd  *command
		args []string
		want []string
	}{
		{cmdTest, []string{"-foo", "./p"}, []string{"unknown flag -foo", "'racekit help test'"}},
		{cmdFuzz, []string{"-cpuprofile", "c.out", "./p"}, []string{"racekit fuzz builds the test binary", "-tags", "-timeout"}},
		{cmdHatch, []string{"-trace", "t.rkt", "./p"}, []string{"racekit's -trace is now -use-trace"}},
		{cmdReplay, []string{"-nosuch", "./p"}, []string{"'racekit help replay'"}},
	} {
		_, err := tc.cmd.parseFlags(tc.args)
		var ue *gotestline.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s %q: error %v, want a usage error", tc.cmd.name, tc.args, err)
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
	shared := map[gotestline.Mode]map[string]bool{
		// -tags: racekit instruments and builds with the same tags.
		gotestline.All: {"tags": true},
		// -timeout: the limit of one run of the test binary; -json: the
		// command's result as JSON (go test's -json, the test binary's
		// output as JSON events, cannot apply to many controlled runs).
		gotestline.Runs: {"tags": true, "timeout": true, "json": true},
	}
	n := 0
	for _, c := range commands {
		if c.goTest == gotestline.None {
			continue
		}
		n++
		c.flags.VisitAll(func(f *flag.Flag) {
			if gotestline.IsGoFlag(f.Name) && !shared[c.goTest][f.Name] {
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
