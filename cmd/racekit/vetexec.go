package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// go test vets each package it tests before running its tests (atomic,
// bool, buildtags, directive, errorsas, ifaceassert, nilfunc, printf,
// stringintconv, tests; or what -vet says) and fails the package, as a
// build failure, on a report. Under racekit test it would vet the
// instrumented copies the overlay gives it: the tests check looks only at
// files named *_test.go (the copies are not), and the other checks would
// see racekit's hooks instead of the user's calls. So racekit test runs go
// test with -toolexec set to racekit itself (toolexecArg): every tool
// goes through runToolexec, which runs it unchanged except vet, whose
// configuration then names the user's own files in place of their
// instrumented copies. Vet type-checks them against the instrumented
// build's export data (the same API) and reports as under go test -race,
// through go test: the same messages, the package marked as failed the
// same way, the same exit status, -json included. -vet=off skips it all.
// The compiler's embed configuration is mended the same way: a package
// that embeds its own .go files gets the user's, not the copies.

// toolexecCmd is the hidden first argument of racekit as go's -toolexec.
const toolexecCmd = "__toolexec"

// toolexecArg returns the value of go test's -toolexec for racekit test:
// racekit itself, the overlay, and user (the user's own -toolexec, whose
// program racekit then runs each tool under), quoted as go splits it.
func toolexecArg(overlay, user string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	userFields, err := splitQuoted(user)
	if err != nil {
		return "", fmt.Errorf("-toolexec: %v", err)
	}
	var b strings.Builder
	for i, f := range []string{self, toolexecCmd, overlay, strconv.Itoa(len(userFields))} {
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

// runToolexec runs one tool for go: args are the overlay, the number of
// the user's -toolexec fields, those fields, then the tool and its
// arguments. Its exit status is the tool's.
func runToolexec(args []string) int {
	if len(args) < 3 {
		fmt.Fprintf(os.Stderr, "racekit %s: missing arguments\n", toolexecCmd)
		return exitUsage
	}
	overlay := args[0]
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 || len(args) < 3+n {
		fmt.Fprintf(os.Stderr, "racekit %s: bad arguments %q\n", toolexecCmd, args)
		return exitUsage
	}
	user, tool, targs := args[2:2+n], args[2+n], args[3+n:]
	name := strings.TrimSuffix(filepath.Base(tool), ".exe")
	isVet := name == "vet"
	if (isVet || name == "compile") && len(targs) == 1 && targs[0] == "-V=full" {
		return toolVersion(user, tool)
	}
	if isVet && len(targs) > 0 && strings.HasSuffix(targs[len(targs)-1], ".cfg") {
		cfg := targs[len(targs)-1]
		orig, err := originalsConfig(cfg, overlay)
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: vet of the original files: %v\n", err)
			return exitError
		}
		targs = append(append([]string{}, targs[:len(targs)-1]...), orig)
	}
	if name == "compile" {
		for i, a := range targs {
			if a != "-embedcfg" || i+1 >= len(targs) {
				continue
			}
			cfg, err := originalEmbeds(targs[i+1], overlay)
			if err != nil {
				fmt.Fprintf(os.Stderr, "racekit: embedding the original files: %v\n", err)
				return exitError
			}
			targs = append([]string{}, targs...)
			targs[i+1] = cfg
		}
	}
	return runTool(append(append(append([]string{}, user...), tool), targs...))
}

// runTool runs argv with racekit's standard streams and returns its exit
// status.
func runTool(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "racekit %s: %v\n", toolexecCmd, err)
		return exitError
	}
	return exitOK
}

// toolVersion answers go's "vet -V=full" and "compile -V=full", from
// which it derives the keys of the tools' results in its cache: vet of the
// original files, and packages compiled with the original files embedded,
// get keys of their own, so that results of the tools on the instrumented
// copies (an older racekit's) are never taken for them, nor the other way
// round.
func toolVersion(user []string, tool string) int {
	argv := append(append([]string{}, user...), tool, "-V=full")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "racekit %s: %v\n", toolexecCmd, err)
		return exitError
	}
	line := strings.TrimRight(string(out), "\n")
	if f := strings.Fields(line); len(f) >= 3 && strings.Contains(f[2], "devel") && strings.HasPrefix(f[len(f)-1], "buildID=") {
		// A development toolchain: go keys on the build ID's content part.
		line += "+racekit-originals"
	} else {
		line += " racekit-originals"
	}
	fmt.Println(line)
	return exitOK
}

// originalsConfig writes, next to vet's configuration cfg, a copy whose
// GoFiles name the user's files in place of their instrumented copies
// (the overlay's replacements), without the files racekit adds (a
// TestMain), and returns its path.
func originalsConfig(cfg, overlay string) (string, error) {
	c, err := readToolConfig(cfg)
	if err != nil {
		return "", err
	}
	var files []string
	if err := c.field("GoFiles", &files); err != nil {
		return "", err
	}
	orig, err := overlayOriginals(overlay)
	if err != nil {
		return "", err
	}
	changed := false
	var out []string
	for _, f := range files {
		o, ok := orig[f]
		if !ok {
			out = append(out, f)
			continue
		}
		changed = true
		if _, err := os.Stat(o); err != nil {
			continue // added by racekit: not the user's
		}
		out = append(out, o)
	}
	if !changed {
		return cfg, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	c.m["GoFiles"] = raw
	data, err := json.MarshalIndent(c.m, "", "\t")
	if err != nil {
		return "", err
	}
	p := strings.TrimSuffix(cfg, ".cfg") + ".racekit.cfg"
	return p, os.WriteFile(p, data, 0o666)
}

// A toolConfig is a tool's JSON configuration file (vet's .cfg, the
// compiler's -embedcfg), its fields kept raw so that those racekit does
// not change are written back as they were.
type toolConfig struct {
	path string
	m    map[string]json.RawMessage
}

func readToolConfig(path string) (*toolConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &toolConfig{path: path}
	if err := json.Unmarshal(data, &c.m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}

// field decodes field key into v; an absent field leaves v as it is.
func (c *toolConfig) field(key string, v any) error {
	raw, ok := c.m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %s: %v", c.path, key, err)
	}
	return nil
}

// overlayOriginals reads the overlay file and returns, for each
// replacement it names, the original path.
func overlayOriginals(overlay string) (map[string]string, error) {
	odata, err := os.ReadFile(overlay)
	if err != nil {
		return nil, err
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(odata, &ov); err != nil {
		return nil, fmt.Errorf("%s: %v", overlay, err)
	}
	orig := make(map[string]string, len(ov.Replace))
	for o, copy := range ov.Replace {
		if copy != "" {
			orig[copy] = o
		}
	}
	return orig, nil
}

// originalEmbeds writes, next to the compiler's embed configuration cfg
// (-embedcfg), a copy whose files name the user's files in place of their
// instrumented copies, and returns its path (cfg itself when no file is a
// copy). The go command embeds what the overlay gives it: a package that
// embeds its own source (fasthttp's tests serve fs.go from an embed.FS
// and compare its length with the file's) would get racekit's copy.
func originalEmbeds(cfg, overlay string) (string, error) {
	c, err := readToolConfig(cfg)
	if err != nil {
		return "", err
	}
	var files map[string]string
	var patterns map[string][]string
	if err := c.field("Files", &files); err != nil {
		return "", err
	}
	if err := c.field("Patterns", &patterns); err != nil {
		return "", err
	}
	orig, err := overlayOriginals(overlay)
	if err != nil {
		return "", err
	}
	changed := false
	for name, path := range files {
		o, ok := orig[path]
		if !ok {
			continue
		}
		changed = true
		if _, err := os.Stat(o); err == nil {
			files[name] = o
			continue
		}
		// Added by racekit (a TestMain): not in a directory the user
		// embeds.
		delete(files, name)
		for p, names := range patterns {
			patterns[p] = slices.DeleteFunc(names, func(n string) bool { return n == name })
		}
	}
	if !changed {
		return cfg, nil
	}
	for k, v := range map[string]any{"Files": files, "Patterns": patterns} {
		if _, ok := c.m[k]; !ok {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		c.m[k] = raw
	}
	data, err := json.Marshal(c.m)
	if err != nil {
		return "", err
	}
	p := cfg + ".racekit"
	return p, os.WriteFile(p, data, 0o666)
}

// goflagsToolexec is the -toolexec of $GOFLAGS, which racekit's own
// -toolexec replaces: racekit runs it in turn.
func goflagsToolexec() string {
	v := ""
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-")
		if val, ok := strings.CutPrefix(f, "toolexec="); ok {
			v = val
		}
	}
	return v
}
