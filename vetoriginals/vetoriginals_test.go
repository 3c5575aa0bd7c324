package vetoriginals

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ToolexecArg quotes its fields as go splits -toolexec; a user's
// -toolexec follows them, counted; ParseTool reads them back.
func TestToolexecArg(t *testing.T) {
	command := []string{"/bin dir/racekit", "__toolexec"}
	for _, user := range []string{"", "env FOO=1", `'/a b/x' -v "c d"`} {
		arg, err := ToolexecArg(command, "/cache dir/overlay.json", user)
		if err != nil {
			t.Fatal(err)
		}
		got, err := splitQuoted(arg)
		if err != nil {
			t.Fatal(err)
		}
		userFields, _ := splitQuoted(user)
		want := append([]string{command[0], command[1], "/cache dir/overlay.json", strconv.Itoa(len(userFields))}, userFields...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("user %q: -toolexec %q splits into %q, want %q", user, arg, got, want)
		}
		tool, err := ParseTool(append(got[2:], "/go/vet", "x.cfg"))
		if err != nil {
			t.Fatal(err)
		}
		if tool.Overlay != "/cache dir/overlay.json" || !slices.Equal(tool.User, userFields) || tool.Path != "/go/vet" || !slices.Equal(tool.Args, []string{"x.cfg"}) {
			t.Errorf("user %q: ParseTool = %+v", user, tool)
		}
	}
	if _, err := splitQuoted(`a 'b`); err == nil {
		t.Error("an unterminated quote: no error")
	}
	if _, err := ToolexecArg([]string{`it's "x"`}, "o", ""); err == nil {
		t.Error("a field with both quotes: no error")
	}
}

// ParseTool refuses what ToolexecArg does not give.
func TestParseToolErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"o", "0"}, {"o", "x", "vet"}, {"o", "-1", "vet"}, {"o", "2", "env", "vet"}} {
		if _, err := ParseTool(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// A version query is vet's or the compiler's -V=full alone.
func TestVersionQuery(t *testing.T) {
	for args, want := range map[string]bool{"/go/vet -V=full": true, "/go/compile.exe -V=full": true, "/go/asm -V=full": false, "/go/vet -V=full x.cfg": false} {
		f := strings.Fields(args)
		if got := (&Tool{Path: f[0], Args: f[1:]}).VersionQuery(); got != want {
			t.Errorf("%s: %v, want %v", args, got, want)
		}
	}
}

// GOFLAGSToolexec is the last -toolexec of $GOFLAGS.
func TestGOFLAGSToolexec(t *testing.T) {
	for goflags, want := range map[string]string{"": "", "-mod=mod -toolexec=a": "a", "--toolexec=a -v -toolexec=b": "b", "-tags=x": ""} {
		if got := GOFLAGSToolexec(goflags); got != want {
			t.Errorf("%q: %q, want %q", goflags, got, want)
		}
	}
}

// overlayDir writes, in a temporary directory, a user's test file and
// plain file, and an overlay replacing the test file and a file racekit
// adds (not on disk) with copies in /cache.
func overlayDir(t *testing.T) (dir, orig, plain, added, overlay string) {
	dir = t.TempDir()
	orig = filepath.Join(dir, "a_test.go")
	plain = filepath.Join(dir, "b.go")
	for _, f := range []string{orig, plain} {
		if err := os.WriteFile(f, []byte("package p\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	added = filepath.Join(dir, "zz_racekit_testmain_test.go") // not on disk
	overlay = filepath.Join(dir, "overlay.json")
	data, _ := json.Marshal(map[string]map[string]string{"Replace": {orig: "/cache/1.go", added: "/cache/2.go"}})
	if err := os.WriteFile(overlay, data, 0o666); err != nil {
		t.Fatal(err)
	}
	return dir, orig, plain, added, overlay
}

// originalsConfig names the user's files in vet's configuration in place
// of their copies, drops the files racekit adds, keeps the others and
// every other field; Command gives vet that configuration.
func TestOriginalsConfig(t *testing.T) {
	dir, orig, plain, _, overlay := overlayDir(t)
	cfg := filepath.Join(dir, "vet.cfg")
	data, _ := json.Marshal(map[string]any{"ID": "p", "GoFiles": []string{"/cache/1.go", plain, "/cache/2.go"}, "VetxOnly": false})
	if err := os.WriteFile(cfg, data, 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := originalsConfig(cfg, overlay)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		ID       string
		GoFiles  []string
		VetxOnly *bool
	}
	data, _ = os.ReadFile(out)
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.ID != "p" || c.VetxOnly == nil || !reflect.DeepEqual(c.GoFiles, []string{orig, plain}) {
		t.Errorf("%s: %s", out, data)
	}
	argv, err := (&Tool{Overlay: overlay, User: []string{"env"}, Path: "/go/vet", Args: []string{"-flag", cfg}}).Command()
	if want := []string{"env", "/go/vet", "-flag", out}; err != nil || !reflect.DeepEqual(argv, want) {
		t.Errorf("Command = %q, %v; want %q", argv, err, want)
	}
	if _, err := (&Tool{Overlay: overlay, Path: "/go/vet", Args: []string{filepath.Join(dir, "none.cfg")}}).Command(); err == nil || !strings.HasPrefix(err.Error(), "vet of the original files: ") {
		t.Errorf("a missing configuration: %v", err)
	}
}

// originalEmbeds embeds the user's files in place of their copies and
// drops the files racekit adds; Command gives the compiler that
// configuration.
func TestOriginalEmbeds(t *testing.T) {
	dir, orig, plain, _, overlay := overlayDir(t)
	cfg := filepath.Join(dir, "embedcfg")
	data, _ := json.Marshal(map[string]any{
		"Patterns": map[string][]string{"*.go": {"a_test.go", "b.go", "zz.go"}},
		"Files":    map[string]string{"a_test.go": "/cache/1.go", "b.go": plain, "zz.go": "/cache/2.go"},
	})
	if err := os.WriteFile(cfg, data, 0o666); err != nil {
		t.Fatal(err)
	}
	argv, err := (&Tool{Overlay: overlay, Path: "/go/compile", Args: []string{"-p", "p", "-embedcfg", cfg, "x.go"}}).Command()
	if err != nil || len(argv) != 6 || argv[4] == cfg {
		t.Fatalf("Command = %q, %v", argv, err)
	}
	var c struct {
		Patterns map[string][]string
		Files    map[string]string
	}
	data, _ = os.ReadFile(argv[4])
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Patterns["*.go"], []string{"a_test.go", "b.go"}) || !reflect.DeepEqual(c.Files, map[string]string{"a_test.go": orig, "b.go": plain}) {
		t.Errorf("%s: %s", argv[4], data)
	}
}
