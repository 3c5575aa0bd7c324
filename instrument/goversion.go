package instrument

import (
	"bytes"
	"fmt"
	"go/build/constraint"
	"go/version"
	"os"
	"strings"
)

// Language versions. A module may say any go version from 1.13 on, or none
// (the go command then compiles it as go1.16), and racekit never edits its
// go.mod. Two things need a newer language than such a module has:
//
//   - the runtime copy: its go.mod must not ask for a newer Go than the
//     main module's (the go command would want the user's go.mod tidied),
//     so it gets the user's go line, and when that is older than
//     minRuntimeGo each of its files gets a //go:build go1.N constraint,
//     which sets that file's language version (go/types and types2 give a
//     file with a go1.N constraint the version max(go1.N, go1.21),
//     whatever its module says);
//   - an instrumented user file older than hookGo: the hooks are generic
//     functions called with inferred type arguments. Its overlay copy gets
//     a go1.21 constraint. go1.21 is the newest version that changes no
//     meaning of a program written for an older one (go1.22 gives loop
//     variables one instance per iteration), and a file that has a go1.N
//     constraint of its own is at go1.21 or later already.
const (
	// minRuntimeGo is the oldest language version the runtime's code
	// compiles with (range over an integer, math/rand/v2: go1.22; weak
	// pointers and runtime.AddCleanup, rt/chanmsg.go: go1.24;
	// TestRuntimeMinGo holds it to that).
	minRuntimeGo = "1.24"
	// hookGo is the language version instrumented code needs (generic
	// calls with inferred type arguments) and may be raised to.
	hookGo = "1.21"
)

// moduleGoVersion returns the go line of the go.mod file at gomod ("" if
// it has none).
func moduleGoVersion(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		if f := strings.Fields(line); len(f) == 2 && f[0] == "go" {
			return f[1], nil
		}
	}
	return "", nil
}

// langBefore reports whether the language version of module go line v
// ("" is none: go1.16) is older than 1.N version min.
func langBefore(v, min string) bool {
	if v == "" {
		v = "1.16"
	}
	return version.Compare(version.Lang("go"+v), "go"+min) < 0
}

// fileGoVersion returns the minimum go version a file's build constraint
// implies ("" when none), as the compilers read it.
func fileGoVersion(src []byte) string {
	for _, l := range headerLines(src) {
		if constraint.IsGoBuild(l.text) {
			if x, err := constraint.Parse(l.text); err == nil {
				return constraint.GoVersion(x)
			}
			return ""
		}
	}
	return ""
}

type srcLine struct {
	off, end int // byte range, without the newline
	text     string
}

// headerLines returns the lines of src before its first line that holds
// anything but a line comment (the lines where build constraints may be).
func headerLines(src []byte) []srcLine {
	var out []srcLine
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		t := strings.TrimSpace(string(src[off:end]))
		if t != "" && !strings.HasPrefix(t, "//") {
			break
		}
		out = append(out, srcLine{off, end, t})
		off = end + 1
	}
	return out
}

// requireGo returns src with go1.N (v is "1.N") added to its build
// constraint: the //go:build line (or the old // +build lines, which it
// replaces) becomes "//go:build go1.N && (old)", in place and keeping the
// line count; a file without one gets "//go:build go1.N" and a blank line
// first. The file then builds where it did (with a toolchain of go1.N or
// later) and is compiled at language version go1.N or later.
func requireGo(src []byte, v string) ([]byte, error) {
	goTag := &constraint.TagExpr{Tag: "go" + v}
	var goBuild *srcLine
	var plus []srcLine
	lines := headerLines(src)
	lastBlank := -1 // go/build reads // +build lines only above a blank line
	for _, l := range lines {
		if l.text == "" {
			lastBlank = l.off
		}
	}
	for i, l := range lines {
		switch {
		case constraint.IsGoBuild(l.text):
			if goBuild != nil {
				return nil, fmt.Errorf("multiple //go:build lines")
			}
			goBuild = &lines[i]
		case constraint.IsPlusBuild(l.text) && l.off < lastBlank:
			plus = append(plus, l)
		}
	}
	var old constraint.Expr
	switch {
	case goBuild != nil:
		x, err := constraint.Parse(goBuild.text)
		if err != nil {
			return nil, err
		}
		old = x
	case len(plus) > 0:
		// go/build reads // +build lines only when there is no //go:build
		// line: their conjunction is the file's constraint.
		for _, l := range plus {
			x, err := constraint.Parse(l.text)
			if err != nil {
				return nil, err
			}
			if old == nil {
				old = x
			} else {
				old = &constraint.AndExpr{X: old, Y: x}
			}
		}
	default:
		return append([]byte("//go:build "+goTag.String()+"\n\n"), src...), nil
	}
	line := "//go:build " + (&constraint.AndExpr{X: goTag, Y: old}).String()
	// The // +build lines go (vet checks that they match the //go:build
	// line): each becomes an empty comment, so that no line moves.
	first := goBuild
	if first == nil {
		first = &plus[0]
	}
	var b bytes.Buffer
	prev := 0
	edit := func(l srcLine, text string) {
		b.Write(src[prev:l.off])
		b.WriteString(text)
		prev = l.end
	}
	for _, l := range lines {
		switch {
		case l.off == first.off:
			edit(l, line)
		case constraint.IsPlusBuild(l.text) && l.off < lastBlank:
			edit(l, "//")
		}
	}
	b.Write(src[prev:])
	return b.Bytes(), nil
}

// hookGoSrc returns an instrumented file's source, raised to hookGo when
// the file is compiled at an older language version: its module's go line
// (modGo, "" for none) is older and it has no go version constraint of its
// own.
func hookGoSrc(src []byte, modGo string) ([]byte, error) {
	if !langBefore(modGo, hookGo) || fileGoVersion(src) != "" {
		return src, nil
	}
	return requireGo(src, hookGo)
}
