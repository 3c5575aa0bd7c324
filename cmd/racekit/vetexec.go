package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/racekit/racekit/vetoriginals"
)

// racekit test runs go test with -toolexec set to racekit itself, so that
// go vet sees the user's files, not their instrumented copies: package
// vetoriginals has the why and the logic; this file is the hidden
// subcommand go runs each tool through.

// toolexecCmd is the hidden first argument of racekit as go's -toolexec.
const toolexecCmd = "__toolexec"

// toolexecArg returns the value of go test's -toolexec for racekit test:
// racekit itself, the overlay, and user (the user's own -toolexec, whose
// program racekit then runs each tool under).
func toolexecArg(overlay, user string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	// Through a link named compile, so that go passes long arguments in a
	// response file (vetoriginals.EntryLink); racekit itself if it cannot
	// be made.
	if link, err := vetoriginals.EntryLink(self, filepath.Dir(overlay)); err == nil {
		self = link
	}
	return vetoriginals.ToolexecArg([]string{self, toolexecCmd}, overlay, user)
}

// goflagsToolexec is the -toolexec of $GOFLAGS, which racekit's own
// -toolexec replaces: racekit runs it in turn.
func goflagsToolexec() string {
	return vetoriginals.GOFLAGSToolexec(os.Getenv("GOFLAGS"))
}

// runToolexec runs one tool for go (args are what toolexecArg put after
// toolexecCmd, then the tool and its arguments). Its exit status is the
// tool's.
func runToolexec(args []string) int {
	t, err := vetoriginals.ParseTool(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "racekit %s: %v\n", toolexecCmd, err)
		return exitUsage
	}
	if t.VersionQuery() {
		line, err := t.Version(os.Stderr)
		if err != nil {
			return toolStatus(err)
		}
		fmt.Println(line)
		return exitOK
	}
	argv, err := t.Command()
	if err != nil {
		fmt.Fprintf(os.Stderr, "racekit: %v\n", err)
		return exitError
	}
	argv, cleanup, err := vetoriginals.LongArgs(argv, len(t.User))
	if err != nil {
		fmt.Fprintf(os.Stderr, "racekit %s: writing the tool's response file: %v\n", toolexecCmd, err)
		return exitError
	}
	defer cleanup()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return toolStatus(cmd.Run())
}

// runToolexecResponse runs the -toolexec entry when args is go's response
// file for it ("@file": go writes one for long arguments, since the entry
// runs as a link named compile, vetoriginals.EntryLink); ok is false when
// args is not one.
func runToolexecResponse(args []string) (code int, ok bool) {
	if len(args) != 1 || !strings.HasPrefix(args[0], "@") {
		return 0, false
	}
	exp, err := vetoriginals.ExpandArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "racekit %s: %v\n", toolexecCmd, err)
		return exitUsage, true
	}
	if len(exp) == 0 || exp[0] != toolexecCmd {
		return 0, false
	}
	return runToolexec(exp[1:]), true
}

// toolStatus is racekit's exit status for a tool's run that ended with err:
// the tool's own when it ran.
func toolStatus(err error) int {
	if err == nil {
		return exitOK
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "racekit %s: %v\n", toolexecCmd, err)
	return exitError
}
