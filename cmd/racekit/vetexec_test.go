package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// toolexecArg quotes its fields as go splits -toolexec; a user's
// -toolexec follows them, counted.
func TestToolexecArg(t *testing.T) {
	for _, user := range []string{"", "env FOO=1", `'/a b/x' -v "c d"`} {
		arg, err := toolexecArg("/cache dir/overlay.json", user)
		if err != nil {
			t.Fatal(err)
		}
		got, err := splitQuoted(arg)
		if err != nil {
			t.Fatal(err)
		}
		userFields, _ := splitQuoted(user)
		self, _ := os.Executable()
		want := append([]string{self, toolexecCmd, "/cache dir/overlay.json", strconv.Itoa(len(userFields))}, userFields...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("user %q: -toolexec %q splits into %q, want %q", user, arg, got, want)
		}
	}
	if _, err := splitQuoted(`a 'b`); err == nil {
		t.Error("an unterminated quote: no error")
	}
}

// originalsConfig names the user's files in vet's configuration in place
// of their copies, drops the files racekit adds, keeps the others and
// every other field.
func TestOriginalsConfig(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "a_test.go")
	plain := filepath.Join(dir, "b.go")
	for _, f := range []string{orig, plain} {
		if err := os.WriteFile(f, []byte("package p\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	added := filepath.Join(dir, "zz_racekit_testmain_test.go") // not on disk
	overlay := filepath.Join(dir, "overlay.json")
	data, _ := json.Marshal(map[string]map[string]string{"Replace": {orig: "/cache/1.go", added: "/cache/2.go"}})
	if err := os.WriteFile(overlay, data, 0o666); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "vet.cfg")
	data, _ = json.Marshal(map[string]any{"ID": "p", "GoFiles": []string{"/cache/1.go", plain, "/cache/2.go"}, "VetxOnly": false})
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
}
