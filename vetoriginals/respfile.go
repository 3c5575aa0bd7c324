package vetoriginals

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Response files. The go command hands a tool arguments longer than
// argLimit in a response file (one argument "@file": a line per argument,
// backslashes and newlines escaped), but only when the program it runs is
// named compile, link, asm, cgo or cover (cmd/go's useResponseFile), the
// tools whose flag parsing reads them. Under -toolexec the program is the
// entry, so a package of thousands of files failed to build under racekit
// test with "argument list too long" where go test -race builds it
// (held-out elastic/go-elasticsearch's typedapi/types, and the 554
// packages that import it). The entry is therefore run through a link
// named compile (EntryLink), expands the response file it is given
// (ExpandArgs), and hands a tool that reads response files one of its own
// when the arguments are long (LongArgs).

// argLimit is cmd/go's: the length of arguments past which it writes a
// response file (cmd/internal/sys.ExecArgLengthLimit).
const argLimit = 30 << 10

// responseTools are the tools whose flag parsing expands response files
// (cmd/internal/objabi.Flagparse).
var responseTools = []string{"compile", "link", "asm", "cgo", "cover"}

// EntryLink returns the path of a link to self named compile, in a
// directory of dir of its own for self (two racekit executables sharing a
// cache do not share a link), made if missing. go's -toolexec then names
// the entry by that path, and go passes long arguments to it in a
// response file.
func EntryLink(self, dir string) (string, error) {
	sum := sha256.Sum256([]byte(self))
	d := filepath.Join(dir, "toolexec-"+hex.EncodeToString(sum[:8]))
	link := filepath.Join(d, "compile")
	if target, err := os.Readlink(link); err == nil && target == self {
		return link, nil
	}
	if err := os.MkdirAll(d, 0o777); err != nil {
		return "", err
	}
	// Made under a name of its own and renamed, so that a concurrent run
	// never sees a half-made link.
	tmp, err := os.MkdirTemp(d, "link")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Symlink(self, filepath.Join(tmp, "compile")); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, "compile"), link); err != nil {
		return "", err
	}
	return link, nil
}

// ExpandArgs returns the arguments a response file holds when args is one
// "@file" argument, and args otherwise.
func ExpandArgs(args []string) ([]string, error) {
	if len(args) != 1 || !strings.HasPrefix(args[0], "@") {
		return args, nil
	}
	name := args[0][1:]
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the last argument's newline
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if out[i], err = decodeArg(l); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
	}
	return out, nil
}

// LongArgs returns argv, the command line of a tool (the user's -toolexec
// fields, if any, before the tool at index at), with the tool's arguments
// moved into a response file when they are longer than argLimit and the
// tool reads response files; cleanup removes the file.
func LongArgs(argv []string, at int) (out []string, cleanup func(), err error) {
	cleanup = func() {}
	if at < 0 || at >= len(argv) || !slices.Contains(responseTools, strings.TrimSuffix(filepath.Base(argv[at]), ".exe")) {
		return argv, cleanup, nil
	}
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	if n <= argLimit {
		return argv, cleanup, nil
	}
	f, err := os.CreateTemp("", "racekit-args")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.Remove(f.Name()) }
	w := bufio.NewWriter(f)
	for _, a := range argv[at+1:] {
		w.WriteString(encodeArg(a))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		cleanup()
		return nil, func() {}, err
	}
	if err := f.Close(); err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return append(slices.Clone(argv[:at+1]), "@"+f.Name()), cleanup, nil
}

// encodeArg escapes a backslash and a newline as cmd/go's encodeArg does.
func encodeArg(a string) string {
	if !strings.ContainsAny(a, "\\\n") {
		return a
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(a)
}

// decodeArg undoes encodeArg (cmd/internal/objabi.DecodeArg).
func decodeArg(a string) (string, error) {
	if !strings.Contains(a, `\`) {
		return a, nil
	}
	var b strings.Builder
	for i := 0; i < len(a); i++ {
		if a[i] != '\\' {
			b.WriteByte(a[i])
			continue
		}
		if i++; i == len(a) {
			return "", fmt.Errorf("a backslash at the end of %q", a)
		}
		switch a[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		default:
			return "", fmt.Errorf("bad escape \\%c in %q", a[i], a)
		}
	}
	return b.String(), nil
}
