// Package vetoriginals shows go vet the user's own files when go test
// builds their instrumented copies through an overlay.
//
// go test vets each package it tests before running its tests (atomic,
// bool, buildtags, directive, errorsas, ifaceassert, nilfunc, printf,
// stringintconv, tests; or what -vet says) and fails the package, as a
// build failure, on a report. Under racekit test it would vet the
// instrumented copies the overlay gives it: the tests check looks only at
// files named *_test.go (the copies are not), and the other checks would
// see racekit's hooks instead of the user's calls. So racekit test runs go
// test with -toolexec set to racekit itself (ToolexecArg): every tool goes
// through it (ParseTool, Tool.Command), unchanged except vet, whose
// configuration then names the user's own files in place of their
// instrumented copies. Vet type-checks them against the instrumented
// build's export data (the same API) and reports as under go test -race,
// through go test: the same messages, the package marked as failed the
// same way, the same exit status, -json included. -vet=off skips it all.
// The compiler's embed configuration is mended the same way: a package
// that embeds its own .go files gets the user's, not the copies.
//
// The command that go runs as -toolexec (racekit's hidden subcommand) runs
// the tools and prints; this package forms and reads its arguments and
// rewrites the tools' configurations.
package vetoriginals

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ToolexecArg returns the value of go's -toolexec that runs command (the
// program and arguments of the -toolexec entry, racekit's hidden
// subcommand) with the overlay and user (the user's own -toolexec, whose
// program the entry then runs each tool under), quoted as go splits it.
// ParseTool reads what the entry then gets after command.
func ToolexecArg(command []string, overlay, user string) (string, error) {
	userFields, err := splitQuoted(user)
	if err != nil {
		return "", fmt.Errorf("-toolexec: %v", err)
	}
	var b strings.Builder
	for i, f := range append(slices.Clone(command), overlay, strconv.Itoa(len(userFields))) {
		q, err := quoteField(f)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q)
	}
	if user != "" {
		b.WriteString(" " + user)
	}
	return b.String(), nil
}

// quoteField quotes s for go's -toolexec (cmd/internal/quoted: a field
// in single or double quotes, no escapes).
func quoteField(s string) (string, error) {
	switch {
	case !strings.ContainsAny(s, "'"):
		return "'" + s + "'", nil
	case !strings.ContainsAny(s, `"`):
		return `"` + s + `"`, nil
	}
	return "", fmt.Errorf("cannot quote %q for -toolexec", s)
}

// splitQuoted splits s into fields as the go command splits -toolexec
// (cmd/internal/quoted.Split).
func splitQuoted(s string) ([]string, error) {
	var f []string
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(s) > 0 {
		for len(s) > 0 && space(s[0]) {
			s = s[1:]
		}
		if len(s) == 0 {
			break
		}
		if q := s[0]; q == '"' || q == '\'' {
			i := strings.IndexByte(s[1:], q)
			if i < 0 {
				return nil, fmt.Errorf("unterminated %c string", q)
			}
			f = append(f, s[1:1+i])
			s = s[2+i:]
			continue
		}
		i := 0
		for i < len(s) && !space(s[i]) {
			i++
		}
		f = append(f, s[:i])
		s = s[i:]
	}
	return f, nil
}

// Tool is one run of a tool the go command asks the -toolexec entry for.
type Tool struct {
	Overlay string   // the overlay file of the instrumented build
	User    []string // the user's -toolexec, split: the tool runs under it
	Path    string   // the tool
	Args    []string // the tool's arguments
}

// ParseTool reads the arguments of the -toolexec entry (those after the
// command ToolexecArg was given): the overlay, the number of the user's
// -toolexec fields, those fields, then the tool and its arguments.
func ParseTool(args []string) (*Tool, error) {
	if len(args) < 3 {
		return nil, errors.New("missing arguments")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 || len(args) < 3+n {
		return nil, fmt.Errorf("bad arguments %q", args)
	}
	return &Tool{Overlay: args[0], User: args[2 : 2+n], Path: args[2+n], Args: args[3+n:]}, nil
}

// name is the tool's name: vet, compile, ...
func (t *Tool) name() string {
	return strings.TrimSuffix(filepath.Base(t.Path), ".exe")
}

// VersionQuery reports whether go asks vet or the compiler for its
// version (-V=full): the entry answers with Version.
func (t *Tool) VersionQuery() bool {
	name := t.name()
	return (name == "vet" || name == "compile") && len(t.Args) == 1 && t.Args[0] == "-V=full"
}

// Version runs the tool for its version, its standard error going to
// stderr, and returns the line to answer go with, from which go derives
// the keys of the tools' results in its cache: vet of the original files,
// and packages compiled with the original files embedded, get keys of
// their own, so that results of the tools on the instrumented copies (an
// older racekit's) are never taken for them, nor the other way round. The
// error is an *exec.ExitError when the tool ran and failed.
func (t *Tool) Version(stderr io.Writer) (string, error) {
	argv := append(slices.Clone(t.User), t.Path, "-V=full")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	line := strings.TrimRight(string(out), "\n")
	if f := strings.Fields(line); len(f) >= 3 && strings.Contains(f[2], "devel") && strings.HasPrefix(f[len(f)-1], "buildID=") {
		// A development toolchain: go keys on the build ID's content part.
		line += "+racekit-originals"
	} else {
		line += " racekit-originals"
	}
	return line, nil
}

// Command returns the command line to run the tool with: under the user's
// -toolexec, and for vet and the compiler with configurations that name
// the user's files in place of their instrumented copies (written next to
// go's).
func (t *Tool) Command() ([]string, error) {
	args := t.Args
	name := t.name()
	if name == "vet" && len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg") {
		orig, err := originalsConfig(args[len(args)-1], t.Overlay)
		if err != nil {
			return nil, fmt.Errorf("vet of the original files: %v", err)
		}
		args = append(slices.Clone(args[:len(args)-1]), orig)
	}
	if name == "compile" {
		for i, a := range args {
			if a != "-embedcfg" || i+1 >= len(args) {
				continue
			}
			cfg, err := originalEmbeds(args[i+1], t.Overlay)
			if err != nil {
				return nil, fmt.Errorf("embedding the original files: %v", err)
			}
			args = slices.Clone(args)
			args[i+1] = cfg
		}
	}
	return append(append(slices.Clone(t.User), t.Path), args...), nil
}

// GOFLAGSToolexec returns the -toolexec of goflags (the value of
// $GOFLAGS), which the entry's -toolexec replaces: the entry runs it in
// turn.
func GOFLAGSToolexec(goflags string) string {
	v := ""
	for _, f := range strings.Fields(goflags) {
		f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-")
		if val, ok := strings.CutPrefix(f, "toolexec="); ok {
			v = val
		}
	}
	return v
}
