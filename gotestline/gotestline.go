// Package gotestline splits go test's command line as racekit test, fuzz,
// hatch and replay take it: go test's command line plus the command's own
// flags. The rule that keeps them apart: racekit's flags have names go test
// and go build never use (-algo, -keep-trace, -stats, -use-trace, ...), so
// any go test command line works unchanged after "racekit test", and a flag
// means the same wherever it stands: before or after the packages, -flag
// value or -flag=value, one dash or two. Two go flags are racekit's too,
// with go's meaning: -tags (racekit instruments with the same build tags)
// and, for fuzz, hatch and replay, which run the test binary themselves,
// -timeout (the limit of one run). Split is the one place that applies the
// rule; cmd/racekit's TestOwnFlagsDoNotCollide keeps the names apart.
//
// The package knows go's flags (which are go test's, which the test
// binary's, which make sense for each of many runs); the command gives it
// the names of its own flags (OwnFlags) and the arguments, and gets back
// the split line (Line) or a usage error.
package gotestline

import (
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Mode is how a command takes go test's flags.
type Mode uint8

const (
	// None: no go flag; the command has its own flags only.
	None Mode = iota
	// All: every go test and go build flag, given to go test (racekit
	// test).
	All
	// Runs: the test binary's flags that make sense for each of many
	// controlled runs (racekit fuzz, hatch, replay, which build the test
	// binary and run it themselves).
	Runs
)

// OwnFlags are a command's own flags by name, without the dash; the value
// says whether the flag is boolean (it then takes no separate value: -name
// or -name=value).
type OwnFlags map[string]bool

// FromFlagSet returns the flags fs defines.
func FromFlagSet(fs *flag.FlagSet) OwnFlags {
	own := OwnFlags{}
	fs.VisitAll(func(f *flag.Flag) {
		bf, ok := f.Value.(interface{ IsBoolFlag() bool })
		own[f.Name] = ok && bf.IsBoolFlag()
	})
	return own
}

// goFlag is one go test flag of a command line.
type goFlag struct {
	name     string // without dashes and without "test."
	value    string
	hasValue bool     // given with a value (-run X, -run=X, -v=false)
	raw      []string // as given: one argument, or the flag and its value
}

// Line is a go test command line split into the command's part and go's.
type Line struct {
	// Own are the command's own flags, as -name=value (or -name), for its
	// FlagSet to parse.
	Own []string
	// Packages are the packages, as given ("." when none is).
	Packages []string

	flags   []goFlag // go test's flags, in their order
	binArgs []string // arguments for the test binary itself: after -args, or after a positional argument that follows the flags
}

// Has reports whether go flag name was given.
func (l *Line) Has(name string) bool {
	for _, f := range l.flags {
		if f.name == name {
			return true
		}
	}
	return false
}

// Value returns the value of go flag name as the go command takes it (the
// last one given) and whether it was given.
func (l *Line) Value(name string) (string, bool) {
	v, ok := "", false
	for _, f := range l.flags {
		if f.name == name {
			v, ok = f.value, true
		}
	}
	return v, ok
}

// Chatty reports whether go test runs the tests with -v (the last -v
// given, as the flag package takes it).
func (l *Line) Chatty() bool {
	v := false
	for _, f := range l.flags {
		if f.name == "v" {
			v = !f.hasValue || f.value == "true" || f.value == "test2json"
		}
	}
	return v
}

// GoTestArgs is the go test command line racekit test runs: the go flags
// as given (but those named in omit), after the packages, and the test
// binary's arguments after -args.
func (l *Line) GoTestArgs(omit ...string) []string {
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

// BinaryArgs is the test binary's command line, for fuzz, hatch and
// replay, which run it themselves: each go test flag as -test.NAME (go
// test's translation), then the arguments after -args.
func (l *Line) BinaryArgs() []string {
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

// UsageError is a command line error: racekit exits with its usage status.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Split splits the arguments of command cmd, which takes go test's command
// line as mode says, into its own flags (own), the packages, go test's
// flags and the test binary's arguments, the way go test reads its command
// line: flags go before or after the packages, in either form (-name
// value, -name=value; one dash or two); a boolean flag takes no separate
// value; -args passes the rest to the test binary; a non-flag argument
// after the package list and a flag is the test binary's too (with what
// follows). "--" ends the package list (racekit's earlier form: racekit
// test ./p -- -run X). -test.NAME is go test's -NAME; other -test. flags
// are passed on as they are, without a separate value. An unknown flag is
// a *UsageError. -h and -help give flag.ErrHelp.
func Split(cmd string, own OwnFlags, mode Mode, args []string) (*Line, error) {
	l := &Line{}
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
			l.Packages = append(l.Packages, a)
			continue
		}
		inPkgs = false
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, &UsageError{fmt.Sprintf("bad flag syntax: %s", a)}
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
				return &UsageError{fmt.Sprintf("flag needs an argument: -%s", name)}
			}
			i++
			value, hasValue = args[i], true
			raw = append(raw, args[i])
			return nil
		}
		if isBool, ok := own[name]; ok {
			if !isBool {
				if err := needValue(); err != nil {
					return nil, err
				}
			}
			if hasValue {
				l.Own = append(l.Own, "-"+name+"="+value)
			} else {
				l.Own = append(l.Own, "-"+name)
			}
			continue
		}
		short, testDot := strings.CutPrefix(name, "test.")
		kind, known := goFlags[short]
		if testDot && !known {
			// A flag of the test binary go test does not know
			// (-test.paniconexit0): passed on as it is.
			if mode == All {
				l.flags = append(l.flags, goFlag{name: name, value: value, hasValue: hasValue, raw: raw})
				continue
			}
			known, kind = true, goTestBinary
		}
		if !known || (testDot && kind&goTestBinary == 0) || mode == None {
			return nil, UnknownFlag(cmd, own, mode, name)
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
			return nil, &UsageError{fmt.Sprintf("go's -%s cannot be used with racekit: %s", short, goRefusal[short])}
		case mode == Runs && kind&goPerRun == 0:
			msg := fmt.Sprintf("go test's -%s does not apply: racekit %s builds the test binary and runs it itself, under its scheduler; of go test's flags it takes %s", name, cmd, strings.Join(PerRunFlags(own), ", "))
			if n, ok := renamedFlags[short]; ok && own.has(n) {
				msg += fmt.Sprintf(" (racekit's -%s is now -%s)", short, n)
			}
			return nil, &UsageError{msg}
		}
		l.flags = append(l.flags, goFlag{name: short, value: value, hasValue: hasValue, raw: raw})
	}
	if len(l.Packages) == 0 {
		l.Packages = []string{"."}
	}
	return l, nil
}

func (own OwnFlags) has(name string) bool {
	_, ok := own[name]
	return ok
}

// UnknownFlag is the *UsageError for flag name, which neither command cmd
// (its own flags own) nor go test (as mode takes it) has.
func UnknownFlag(cmd string, own OwnFlags, mode Mode, name string) error {
	msg := fmt.Sprintf("unknown flag -%s", name)
	if n, ok := renamedFlags[name]; ok && own.has(n) {
		msg += fmt.Sprintf(" (racekit's -%s is now -%s)", name, n)
	}
	if mode == None {
		return &UsageError{msg + fmt.Sprintf("; racekit %s's flags are listed by 'racekit help %s'", cmd, cmd)}
	}
	return &UsageError{msg + fmt.Sprintf("; go test flags go anywhere, racekit's are listed by 'racekit help %s', and a flag of the test binary itself goes after -args", cmd)}
}

// PerRunFlags lists the go test flags a command in mode Runs takes (fuzz,
// hatch, replay), with the go flags it defines itself (-tags, -timeout).
func PerRunFlags(own OwnFlags) []string {
	var names []string
	for n, k := range goFlags {
		if k&goPerRun != 0 || (n == "tags" || n == "timeout") && own.has(n) {
			names = append(names, "-"+n)
		}
	}
	sort.Strings(names)
	return names
}
