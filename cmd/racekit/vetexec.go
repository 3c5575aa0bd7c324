package main

import (
	"fmt"
	"os"
	"os/exec"

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
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return toolStatus(cmd.Run())
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
