package vetoriginals

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Arguments written by LongArgs (as cmd/go writes them) read back the same
// through ExpandArgs, newlines and backslashes included; short ones, and a
// tool that does not read response files, are left on the command line.
func TestLongArgsRoundTrip(t *testing.T) {
	long := strings.Repeat("x", argLimit)
	argv := []string{"/usr/bin/time", "/go/pkg/tool/compile", "-trimpath", long, "a\\b\nc", "", "last"}
	got, cleanup, err := LongArgs(argv, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if len(got) != 3 || got[0] != argv[0] || got[1] != argv[1] || !strings.HasPrefix(got[2], "@") {
		t.Fatalf("LongArgs = %q, want the program, the tool and @file", got[:min(3, len(got))])
	}
	back, err := ExpandArgs(got[2:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, argv[2:]) {
		t.Errorf("read back %d arguments, want the %d written", len(back), len(argv[2:]))
	}
	cleanup()
	if _, err := os.Stat(got[2][1:]); !os.IsNotExist(err) {
		t.Errorf("cleanup left the response file: %v", err)
	}
	for _, a := range [][]string{
		{"/go/pkg/tool/compile", "-o", "x.a"},       // short
		{"/go/pkg/tool/vet", long},                  // vet reads no response file
		{"/go/pkg/tool/compile"},                    // no arguments
		{"/go/pkg/tool/link.exe", "-o", "x", "y.a"}, // short, .exe
	} {
		got, _, err := LongArgs(a, 0)
		if err != nil || !slices.Equal(got, a) {
			t.Errorf("LongArgs(%.40q) = %.60q, %v; want it unchanged", a, got, err)
		}
	}
}

func TestExpandArgs(t *testing.T) {
	if got, err := ExpandArgs([]string{"-o", "@x"}); err != nil || len(got) != 2 {
		t.Errorf("two arguments: %q, %v; want them as they are", got, err)
	}
	name := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(name, []byte("__toolexec\na\\nb\n\nc\\\\\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	got, err := ExpandArgs([]string{"@" + name})
	if want := []string{"__toolexec", "a\nb", "", `c\`}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ExpandArgs = %q, %v; want %q", got, err, want)
	}
	if err := os.WriteFile(name, []byte("ok\nbad\\x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ExpandArgs([]string{"@" + name}); err == nil || !strings.Contains(err.Error(), name+":2:") {
		t.Errorf("a bad escape on line 2: %v, want an error naming the file and line", err)
	}
	if _, err := ExpandArgs([]string{"@" + name + ".missing"}); err == nil {
		t.Error("a missing file: no error")
	}
}

// EntryLink makes a link named compile to self, once per executable, and
// returns it again without remaking it.
func TestEntryLink(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "racekit")
	other := filepath.Join(dir, "racekit2")
	l1, err := EntryLink(self, dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(l1) != "compile" {
		t.Errorf("link %s, want one named compile", l1)
	}
	if target, err := os.Readlink(l1); err != nil || target != self {
		t.Errorf("link to %q, %v; want %q", target, err, self)
	}
	if again, err := EntryLink(self, dir); err != nil || again != l1 {
		t.Errorf("again: %s, %v; want %s", again, err, l1)
	}
	l2, err := EntryLink(other, dir)
	if err != nil || l2 == l1 {
		t.Errorf("another executable: %s, %v; want a link of its own", l2, err)
	}
}

func FuzzArgCodec(f *testing.F) {
	for _, s := range []string{"", "plain", `a\b`, "a\nb", `\\n`, "\\", "é\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := encodeArg(s)
		if strings.Contains(enc, "\n") {
			t.Fatalf("encodeArg(%q) = %q holds a newline", s, enc)
		}
		dec, err := decodeArg(enc)
		if err != nil || dec != s {
			t.Fatalf("decodeArg(encodeArg(%q)) = %q, %v", s, dec, err)
		}
		decodeArg(s) // any line: an error or a value, no panic
	})
}
