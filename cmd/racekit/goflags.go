package main

import (
	"errors"
	"flag"
	"strings"

	"github.com/racekit/racekit/gotestline"
)

// The commands that take go test's command line (test, fuzz, hatch,
// replay) leave its parsing to package gotestline, which says which flags
// are racekit's, which go test's and which the test binary's.

// parseFlags parses a command's arguments: racekit's flags, and for the
// commands that take go test's command line, go's (c.line). It returns the
// positional arguments (the packages, for those).
func (c *command) parseFlags(args []string) ([]string, error) {
	if c.goTest == gotestline.None {
		err := c.flags.Parse(args)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			msg := err.Error()
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
				return nil, gotestline.UnknownFlag(c.name, gotestline.FromFlagSet(c.flags), gotestline.None, name)
			}
			return nil, &gotestline.UsageError{Msg: msg}
		}
		return c.flags.Args(), err
	}
	l, err := gotestline.Split(c.name, gotestline.FromFlagSet(c.flags), c.goTest, args)
	if err != nil {
		return nil, err
	}
	if err := c.flags.Parse(l.Own); err != nil {
		return nil, &gotestline.UsageError{Msg: err.Error()}
	}
	c.line = l
	return l.Packages, nil
}
