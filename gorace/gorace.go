// Package gorace reads the GORACE environment variable as the race
// runtime linked into a -race binary reads it (ThreadSanitizer's flag
// parser), so that racekit's runtime and its analysis agree on what a
// setting means. It imports only the standard library: it is part of the
// runtime copied into users' builds (instrument's runtimeDirs).
package gorace

import "strings"

// Options returns the name=value pairs of gorace, the variable's value:
// pairs are split at spaces, tabs, newlines, commas and colons, as the
// sanitizers' parser splits them; a name given twice keeps its last value;
// a field without '=' is left out.
func Options(gorace string) map[string]string {
	opts := map[string]string{}
	sep := func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', ',', ':':
			return true
		}
		return false
	}
	for _, f := range strings.FieldsFunc(gorace, sep) {
		if name, val, ok := strings.Cut(f, "="); ok && name != "" {
			opts[name] = val
		}
	}
	return opts
}

// Bool is option name of opts as a boolean: def when absent or not one of
// the parser's words ("1", "true", "yes"; "0", "false", "no").
func Bool(opts map[string]string, name string, def bool) bool {
	switch opts[name] {
	case "1", "true", "yes":
		return true
	case "0", "false", "no":
		return false
	}
	return def
}

// Int is option name of opts as a non-negative decimal integer: def when
// absent, negative or not a number.
func Int(opts map[string]string, name string, def int) int {
	v, ok := opts[name]
	if !ok || v == "" {
		return def
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' || n > (1<<31)/10 {
			return def
		}
		n = n*10 + int(c-'0')
	}
	return n
}
