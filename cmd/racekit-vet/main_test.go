package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// racekit-vet as go vet's -vettool, for real, on a module of two
// packages: the race is between a function of package a and a goroutine
// of package b that calls it, so the warning needs a's summary, which go
// vet computes in a's own process and passes to b's as a fact. The unlocked
// counter is reported with both accesses; the locked one is not.
func TestVettool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds racekit-vet and runs go vet")
	}
	dir := t.TempDir()
	tool := filepath.Join(dir, "racekit-vet")
	if out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod := filepath.Join(dir, "m")
	for name, src := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a.go": `package a

import "sync"

var hits int

var mu sync.Mutex
var locked int

// Hit bumps both counters, one of them under mu.
func Hit() {
	hits++
	mu.Lock()
	locked++
	mu.Unlock()
}
`,
		"b/b.go": `package b

import (
	"sync"

	"example.com/m/a"
)

// Run calls a.Hit from two goroutines.
func Run() {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Hit()
		}()
	}
	wg.Wait()
}
`,
	} {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", "-vettool="+tool, "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go vet passed; want the race reported:\n%s", out)
	}
	text := string(out)
	if !strings.Contains(text, "a.go:12") || strings.Contains(text, "a.go:14") {
		t.Errorf("go vet -vettool: want the race on hits (a.go:12) and none on locked (a.go:14):\n%s", text)
	}
}
