package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The harness stops when a module's tests removed /dev/null: a regular
// file in its place, or none, is an error; the device is not.
func TestDevNullOK(t *testing.T) {
	if err := devNullOK(os.DevNull); err != nil {
		t.Skipf("this machine's %s: %v", os.DevNull, err)
	}
	file := filepath.Join(t.TempDir(), "null")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if devNullOK(file) == nil {
		t.Error("a regular file passed as /dev/null")
	}
	if devNullOK(filepath.Join(t.TempDir(), "missing")) == nil {
		t.Error("a missing file passed as /dev/null")
	}
}
