// Command racekit finds data races in Go programs and proves them.
//
// Usage:
//
//	racekit <command> [flags] [arguments]
//
// Run `racekit help` for the list of commands and `racekit help <command>`
// for one. Exit status: 0 when no race was found, 66 when races were found
// (the Go race detector's default exit code), 1 on an error (bad input,
// I/O), 2 on a usage error; racekit test exits as go test -race does (1 on
// a race), racekit run with the program's status. `racekit help exit` has
// the details.
//
// # The code
//
// Package main parses flags, wires the stages and prints. The analysis of
// a trace and its stacks live in package analyze; the confirmation
// campaigns of fuzz, hatch, replay and test -confirm (candidates,
// controlled runs, verdicts, shards) in package confirm, which fuzz.go,
// hatch.go, replay.go and test_confirm.go call with the options their
// flags give; conformance's and corpus's runs in packages conformance and
// verdictdiff.
//
// racekit test's go test vets the user's files, not their copies
// (vetexec.go: racekit as -toolexec). Package testout, which test.go
// calls, analyzes each test binary's trace while the binary runs
// (early.go, over analyze.Follow), waits for that analysis at the
// package's end, and holds back each package's closing lines until then:
// output.go the lines and text output, json.go -json's events and held
// test ends, races.go the races of each test and their reports.
//
// The long commands (fuzz, hatch, vet, test's analyses) report their
// progress on stderr through package progress (one line per unit of work
// with the time since the start; -q silences it).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/racekit/racekit/gotestline"
)

// Exit codes, documented in `racekit help exit`.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	exitRaces = 66
)

// command is one subcommand, in the style of cmd/go's base.Command.
type command struct {
	name      string
	usageLine string
	short     string
	long      string
	flags     *flag.FlagSet
	run       func(cmd *command, args []string) int
	// goTest is how the command takes go test's command line (goflags.go);
	// line is that command line, split, once the flags are parsed.
	goTest gotestline.Mode
	line   *gotestline.Line
}

var commands []*command

func register(c *command) *command {
	c.flags = flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags.SetOutput(io.Discard)
	commands = append(commands, c)
	return c
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// errorf prints "racekit CMD: msg" to stderr.
func (c *command) errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "racekit %s: %s\n", c.name, fmt.Sprintf(format, args...))
}

func (c *command) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: racekit %s\n\n%s\n", c.usageLine, strings.TrimSpace(c.long))
	switch c.goTest {
	case gotestline.All:
		fmt.Fprintf(w, "\n%s", goTestAllHelp)
	case gotestline.Runs:
		fmt.Fprintf(w, "\n"+goTestRunsHelp, c.name, strings.Join(gotestline.PerRunFlags(gotestline.FromFlagSet(c.flags)), ", "))
	}
	var names []string
	c.flags.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if len(names) > 0 {
		fmt.Fprintf(w, "\nFlags:\n")
		sort.Strings(names)
		for _, n := range names {
			f := c.flags.Lookup(n)
			arg, usage := flag.UnquoteUsage(f)
			if arg != "" {
				arg = " " + arg
			}
			def := ""
			// A usage that names its default itself has a flag value that only
			// means "not given" (gen's -locks -1: the generator's 4).
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(usage, "(default") {
				def = " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(w, "  -%s%s\n    \t%s%s\n", n, arg, usage, def)
		}
	}
}

// goTestAllHelp is the flag rule, in racekit test's help.
const goTestAllHelp = `Go test's flags: every flag of go test and go build (-run, -skip, -v,
-count, -timeout, -json, -cover, -gcflags, ...) is taken as go test takes it:
before or after the packages, as -flag value or -flag=value, with one dash
or two; the arguments after -args go to the test binary. racekit's own
flags, listed below, are spelled the same way and go anywhere too: their
names are ones go test does not use, so a go test command line means the
same after "racekit test" and a flag means the same wherever it stands (a
prefix such as -racekit.algo, like the test binary's -test.v, would do as
well but is long to type for flags used every day; racekit's verbose
output is therefore -stats, -v being go test's). One flag is both go's and
racekit's: -tags, as go build's, which racekit also
instruments with. -race is accepted and ignored: racekit is the race
detector. An unknown flag is an error; a flag of the test binary itself
(one the test defines) goes after -args. The older form, go test's flags
after "--" (racekit test ./p -- -run X), still works.
`

// goTestRunsHelp is the flag rule for fuzz, hatch and replay (%s: the
// command, then the go test flags it takes).
const goTestRunsHelp = `Go test's flags: %s builds the test binary and runs it itself, under
racekit's scheduler. Of go test's flags it takes those that apply to each
run, anywhere on the command line as racekit test does (see 'racekit help
test'), and gives them to each run of the test binary:

	%s

The arguments after -args go to the test binary as they are. -tags is go
build's; -timeout is go test's, the limit of each run. Other go test flags
(profiles, coverage, build flags) are refused; -json, where the command
has it, prints its own result as JSON.
`

func main() {
	os.Exit(runMain(os.Args[1:]))
}

func runMain(args []string) int {
	if len(args) == 0 {
		mainUsage(os.Stderr)
		return exitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		return help(args[1:])
	}
	if code, ok := runToolexecResponse(args); ok {
		return code // the same, its arguments in go's response file (vetexec.go)
	}
	if name == toolexecCmd {
		return runToolexec(args[1:]) // racekit test's -toolexec (vetexec.go)
	}
	if name == "version" {
		fmt.Println("racekit", version)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(os.Stderr, "racekit %s: unknown command\nRun 'racekit help' for usage.\n", name)
		return exitUsage
	}
	rest, err := c.parseFlags(args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.usage(os.Stdout)
			return exitOK
		}
		c.errorf("%v", err)
		if !strings.Contains(err.Error(), "racekit help") {
			fmt.Fprintf(os.Stderr, "Run 'racekit help %s' for usage.\n", c.name)
		}
		return exitUsage
	}
	return c.run(c, rest)
}

const version = "0.1.0-dev"

func mainUsage(w io.Writer) {
	fmt.Fprintf(w, "racekit finds data races in Go programs and proves them.\n\nUsage:\n\n\tracekit <command> [flags] [arguments]\n\nThe commands are:\n\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	sorted := slices.SortedFunc(slices.Values(commands), func(a, b *command) int { return strings.Compare(a.name, b.name) })
	for _, c := range sorted {
		fmt.Fprintf(w, "\t%-*s %s\n", width, c.name, c.short)
	}
	fmt.Fprintf(w, "\nUse \"racekit help <command>\" for more information about a command.\n")
	fmt.Fprintf(w, "Use \"racekit help exit\" for the exit codes.\n")
}

const exitHelp = `
racekit's exit status tells CI what happened (each command's help gives
its own):

	0   success: no race found, or the command does not look for races
	1   error: unreadable or malformed input, a failed build, I/O failure;
	    for racekit test also a failed test or a race, exactly as
	    go test -race exits; for racekit replay also a run that failed
	2   usage error: unknown command or flag, missing argument
	66  races found (the Go race detector's default exit code), by
	    analyze, vet, anomalies, fuzz (a race confirmed or observed),
	    hatch (an anomaly confirmed or a race observed), replay (the run
	    passed and created the race) and run (when the program itself
	    exited 0; otherwise run exits with the program's status)

bench exits 1 when a subject failed, corpus when a package that passes
plainly fails instrumented.

Under go run (go run ./cmd/racekit ...), every non-zero status shows as 1:
go run prints "exit status 66" and exits 1. Build or install racekit to see
the real code.

A trace cut short by a crash is read up to its last whole block; that is a
warning on stderr, not an error.
`

func help(args []string) int {
	if len(args) == 0 {
		mainUsage(os.Stdout)
		return exitOK
	}
	if args[0] == "exit" {
		fmt.Print(strings.TrimLeft(exitHelp, "\n"))
		return exitOK
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(os.Stderr, "racekit help %s: unknown help topic. Run 'racekit help'.\n", args[0])
		return exitUsage
	}
	c.usage(os.Stdout)
	return exitOK
}

// writeJSON writes v to w as indented JSON, the form of every -json
// output that is one object.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
