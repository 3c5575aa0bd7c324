package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The command lines of racekit test, fuzz, hatch and replay are go test's
// command lines plus racekit's own flags. The rule that keeps them apart:
// racekit's flags have names go test and go build never use (-algo,
// -keep-trace, -stats, -use-trace, ...), so any go test command line
// works unchanged after "racekit test", and a flag means the same wherever
// it stands: before or after the packages, -flag value or -flag=value, one
// dash or two. Two go flags are racekit's too, with go's meaning: -tags
// (racekit instruments with the same build tags) and, for fuzz, hatch and
// replay, which run the test binary themselves, -timeout (the limit of one
// run). splitGoTestLine is the one place that applies the rule;
// TestOwnFlagsDoNotCollide keeps the names apart.

// goFlagKind says what a go test flag is and which value it takes.
type goFlagKind uint8

const (
	// goTestBinary flags are the test binary's (go test passes them on
	// as -test.NAME): racekit fuzz, hatch and replay take most of them.
	goTestBinary goFlagKind = 1 << iota
	// goBuild flags are go build's, and go test's own (-json, -c, -o,
	// -exec, -vet): racekit test passes them to go test.
	goBuild
	// goValue: the flag takes a value (-run X or -run=X); the others are
	// boolean (-v, or -v=false).
	goValue
	// goPerRun: a test binary flag that fuzz, hatch and replay pass to
	// each of their runs (the others write files or select benchmarks,
	// fuzzing or coverage: of no use to a run under racekit's control).
	goPerRun
	// goIgnored: accepted and dropped (-race: racekit is the race
	// detector here).
	goIgnored
	// goRefused: racekit cannot pass it on (the reason is in goRefusal).
	goRefused
)

// goFlags are go test's flags (go help testflag) and go build's (go help
// build, go help test), by name without the dash. TestGoFlagsTable checks
// it against the go command's help.
var goFlags = map[string]goFlagKind{
	// Test binary flags.
	"artifacts":            goTestBinary,
	"bench":                goTestBinary | goValue,
	"benchmem":             goTestBinary,
	"benchtime":            goTestBinary | goValue,
	"blockprofile":         goTestBinary | goValue,
	"blockprofilerate":     goTestBinary | goValue,
	"count":                goTestBinary | goValue | goPerRun,
	"coverprofile":         goTestBinary | goValue,
	"cpu":                  goTestBinary | goValue | goPerRun,
	"cpuprofile":           goTestBinary | goValue,
	"failfast":             goTestBinary | goPerRun,
	"fullpath":             goTestBinary | goPerRun,
	"fuzz":                 goTestBinary | goValue,
	"fuzzminimizetime":     goTestBinary | goValue,
	"fuzztime":             goTestBinary | goValue,
	"list":                 goTestBinary | goValue | goPerRun,
	"memprofile":           goTestBinary | goValue,
	"memprofilerate":       goTestBinary | goValue,
	"mutexprofile":         goTestBinary | goValue,
	"mutexprofilefraction": goTestBinary | goValue,
	"outputdir":            goTestBinary | goValue,
	"parallel":             goTestBinary | goValue | goPerRun,
	"run":                  goTestBinary | goValue | goPerRun,
	"short":                goTestBinary | goPerRun,
	"shuffle":              goTestBinary | goValue | goPerRun,
	"skip":                 goTestBinary | goValue | goPerRun,
	"timeout":              goTestBinary | goValue,
	"trace":                goTestBinary | goValue,
	"v":                    goTestBinary | goPerRun,
	// go test's own.
	"args": goBuild, // handled before the table is consulted
	"c":    goBuild,
	"exec": goBuild | goValue,
	"json": goBuild,
	"o":    goBuild | goValue,
	"vet":  goBuild | goValue,
	// go build's.
	"C":             goBuild | goValue | goRefused,
	"a":             goBuild,
	"n":             goBuild,
	"p":             goBuild | goValue,
	"race":          goBuild | goIgnored,
	"msan":          goBuild,
	"asan":          goBuild,
	"cover":         goBuild,
	"covermode":     goBuild | goValue,
	"coverpkg":      goBuild | goValue,
	"work":          goBuild,
	"x":             goBuild,
	"asmflags":      goBuild | goValue,
	"buildmode":     goBuild | goValue,
	"buildvcs":      goBuild,
	"compiler":      goBuild | goValue,
	"gccgoflags":    goBuild | goValue,
	"gcflags":       goBuild | goValue,
	"installsuffix": goBuild | goValue,
	"ldflags":       goBuild | goValue,
	"linkshared":    goBuild,
	"mod":           goBuild | goValue,
	"modcacherw":    goBuild,
	"modfile":       goBuild | goValue | goRefused,
	"overlay":       goBuild | goValue | goRefused,
	"pgo":           goBuild | goValue,
	"pkgdir":        goBuild | goValue,
	"tags":          goBuild | goValue,
	"trimpath":      goBuild,
	"toolexec":      goBuild | goValue,
}

// goRefusal says why racekit cannot pass a go flag on.
var goRefusal = map[string]string{
	"C":       "run racekit in that directory instead",
	"modfile": "racekit builds with its own -modfile (your go.mod is never modified)",
	"overlay": "racekit builds with its own -overlay (the instrumented copies of your files)",
}

// renamedFlags are racekit flags renamed because go test has the name, for
// the error a user of the old name gets.
var renamedFlags = map[string]string{
	"v":     "stats",
	"trace": "use-trace",
}

// goTestMode is how a command takes go test's flags.
type goTestMode uint8

const (
	noGoFlags goTestMode = iota
	// goTestAll: every go test and go build flag, given to go test (racekit
	// test).
	goTestAll
	// goTestRuns: the test binary's flags that make sense for each of many
	// controlled runs (racekit fuzz, hatch, replay, which build the test
	// binary and run it themselves).
	goTestRuns
)

// goFlag is one go test flag of a command line.
type goFlag struct {
	name     string // without dashes and without "test."
	value    string
	hasValue bool     // given with a value (-run X, -run=X, -v=false)
	raw      []string // as given: one argument, or the flag and its value
}

// goTestLine is a go test command line split into racekit's part and go's.
type goTestLine struct {
	own     []string // racekit's flags, as -name=value (or -name), for its FlagSet
	pkgs    []string // the packages, as given ("." when none is)
	flags   []goFlag // go test's flags, in their order
	binArgs []string // arguments for the test binary itself: after -args, or after a positional argument that follows the flags
}

// has reports whether go flag name was given.
func (l *goTestLine) has(name string) bool {
	for _, f := range l.flags {
		if f.name == name {
			return true
		}
	}
	return false
}

// value returns the value of go flag name as the go command takes it (the
// last one given) and whether it was given.
func (l *goTestLine) value(name string) (string, bool) {
	v, ok := "", false
	for _, f := range l.flags {
		if f.name == name {
			v, ok = f.value, true
		}
	}
	return v, ok
}

// goTestArgs is the go test command line racekit test runs: the go flags
// as given (but those named in omit), after the packages, and the test
// binary's arguments after -args.
func (l *goTestLine) goTestArgs(omit ...string) []string {
	var out []string
	for _, f := range l.flags {
		if !slices.Contains(omit, f.name) {
			out = append(out, f.raw...)
		}
	}
	if len(l.binArgs) > 0 {
		out = append(out, "-args")
		out = append(out, l.binArgs...)
	}
	return out
}

// binaryArgs is the test binary's command line, for fuzz, hatch and
// replay, which run it themselves: each go test flag as -test.NAME (go
// test's translation), then the arguments after -args.
func (l *goTestLine) binaryArgs() []string {
	var out []string
	for _, f := range l.flags {
		if f.hasValue {
			out = append(out, "-test."+f.name+"="+f.value)
		} else {
			out = append(out, "-test."+f.name)
		}
	}
	return append(out, l.binArgs...)
}

// flagUsageError is a command line error: racekit exits with exitUsage.
type flagUsageError struct{ msg string }

func (e *flagUsageError) Error() string { return e.msg }

// splitGoTestLine splits the arguments of a command that takes go test's
// command line (mode) into racekit's flags (those fs defines), the
// packages, go test's flags and the test binary's arguments, the way go
// test reads its command line: flags go before or after the packages, in
// either form (-name value, -name=value; one dash or two); a boolean flag
// takes no separate value; -args passes the rest to the test binary; a
// non-flag argument after the package list and a flag is the test binary's
// too (with what follows). "--" ends the package list (racekit's earlier
// form: racekit test ./p -- -run X). -test.NAME is go test's -NAME; other
// -test. flags are passed on as they are, without a separate value. An
// unknown flag is an error. -h and -help give flag.ErrHelp.
func splitGoTestLine(cmd string, fs *flag.FlagSet, mode goTestMode, args []string) (*goTestLine, error) {
	l := &goTestLine{}
	sawPkgs, inPkgs, afterDashDash := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" && !afterDashDash {
			afterDashDash, inPkgs, sawPkgs = true, false, true
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			if afterDashDash || (sawPkgs && !inPkgs) {
				l.binArgs = append(l.binArgs, args[i:]...)
				break
			}
			sawPkgs, inPkgs = true, true
			l.pkgs = append(l.pkgs, a)
			continue
		}
		inPkgs = false
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, &flagUsageError{fmt.Sprintf("bad flag syntax: %s", a)}
		}
		value, hasValue := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, value, hasValue = name[:j], name[j+1:], true
		}
		if name == "h" || name == "help" {
			return nil, flag.ErrHelp
		}
		if name == "args" {
			l.binArgs = append(l.binArgs, args[i+1:]...)
			break
		}
		raw := []string{a}
		// needValue takes the next argument as the flag's value.
		needValue := func() error {
			if hasValue {
				return nil
			}
			if i+1 >= len(args) {
				return &flagUsageError{fmt.Sprintf("flag needs an argument: -%s", name)}
			}
			i++
			value, hasValue = args[i], true
			raw = append(raw, args[i])
			return nil
		}
		if f := fs.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
				if err := needValue(); err != nil {
					return nil, err
				}
			}
			if hasValue {
				l.own = append(l.own, "-"+name+"="+value)
			} else {
				l.own = append(l.own, "-"+name)
			}
			continue
		}
		short, testDot := strings.CutPrefix(name, "test.")
		kind, known := goFlags[short]
		if testDot && !known {
			// A flag of the test binary go test does not know
			// (-test.paniconexit0): passed on as it is.
			if mode == goTestAll {
				l.flags = append(l.flags, goFlag{name: name, value: value, hasValue: hasValue, raw: raw})
				continue
			}
			known, kind = true, goTestBinary
		}
		if !known || (testDot && kind&goTestBinary == 0) || mode == noGoFlags {
			return nil, unknownFlag(cmd, fs, mode, name)
		}
		if kind&goValue != 0 {
			if err := needValue(); err != nil {
				return nil, err
			}
		}
		switch {
		case kind&goIgnored != 0:
			continue
		case kind&goRefused != 0:
			return nil, &flagUsageError{fmt.Sprintf("go's -%s cannot be used with racekit: %s", short, goRefusal[short])}
		case mode == goTestRuns && kind&goPerRun == 0:
			msg := fmt.Sprintf("go test's -%s does not apply: racekit %s builds the test binary and runs it itself, under its scheduler; of go test's flags it takes %s", name, cmd, strings.Join(perRunFlags(fs), ", "))
			if n, ok := renamedFlags[short]; ok && fs.Lookup(n) != nil {
				msg += fmt.Sprintf(" (racekit's -%s is now -%s)", short, n)
			}
			return nil, &flagUsageError{msg}
		}
		l.flags = append(l.flags, goFlag{name: short, value: value, hasValue: hasValue, raw: raw})
	}
	if len(l.pkgs) == 0 {
		l.pkgs = []string{"."}
	}
	return l, nil
}

// unknownFlag is the error for a flag neither racekit nor go test has.
func unknownFlag(cmd string, fs *flag.FlagSet, mode goTestMode, name string) error {
	msg := fmt.Sprintf("unknown flag -%s", name)
	if n, ok := renamedFlags[name]; ok && fs.Lookup(n) != nil {
		msg += fmt.Sprintf(" (racekit's -%s is now -%s)", name, n)
	}
	if mode == noGoFlags {
		return &flagUsageError{msg + fmt.Sprintf("; racekit %s's flags are listed by 'racekit help %s'", cmd, cmd)}
	}
	return &flagUsageError{msg + fmt.Sprintf("; go test flags go anywhere, racekit's are listed by 'racekit help %s', and a flag of the test binary itself goes after -args", cmd)}
}

// perRunFlags lists the go test flags fuzz, hatch and replay take, with
// the go flags they define themselves (-tags, -timeout).
func perRunFlags(fs *flag.FlagSet) []string {
	var names []string
	for n, k := range goFlags {
		if k&goPerRun != 0 || (n == "tags" || n == "timeout") && fs.Lookup(n) != nil {
			names = append(names, "-"+n)
		}
	}
	sort.Strings(names)
	return names
}

// parseFlags parses a command's arguments: racekit's flags, and for the
// commands that take go test's command line, go's (c.line). It returns the
// positional arguments (the packages, for those).
func (c *command) parseFlags(args []string) ([]string, error) {
	if c.goTest == noGoFlags {
		err := c.flags.Parse(args)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			msg := err.Error()
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
				return nil, unknownFlag(c.name, c.flags, noGoFlags, name)
			}
			return nil, &flagUsageError{msg}
		}
		return c.flags.Args(), err
	}
	l, err := splitGoTestLine(c.name, c.flags, c.goTest, args)
	if err != nil {
		return nil, err
	}
	if err := c.flags.Parse(l.own); err != nil {
		return nil, &flagUsageError{err.Error()}
	}
	c.line = l
	return l.pkgs, nil
}
