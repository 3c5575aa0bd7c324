package testout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgress: nothing before go test starts or while its lines flow;
// after a silence, the test binaries whose traces grow, or that it builds.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	o := &Output{TraceDir: dir}
	if s := o.progressLine(time.Second); s != "" {
		t.Errorf("before Run: %q, want nothing", s)
	}
	o.activity.started.Store(time.Now().Add(-3 * time.Second).UnixNano())
	if s := o.progressLine(time.Second); !strings.HasPrefix(s, "go test: building") || !strings.Contains(s, "no output for 3s") {
		t.Errorf("silent, no trace: %q", s)
	}
	if s := o.progressLine(time.Minute); s != "" {
		t.Errorf("silent for less than quiet: %q, want nothing", s)
	}
	trace := filepath.Join(dir, "example.com_p.test.1234.rkt")
	if err := os.WriteFile(trace, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := o.progressLine(time.Second); !strings.HasPrefix(s, "go test: running example.com_p.test (trace 3 MB so far)") {
		t.Errorf("silent, a trace growing: %q", s)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(trace, old, old); err != nil {
		t.Fatal(err)
	}
	if s := o.progressLine(time.Second); !strings.HasPrefix(s, "go test: building") {
		t.Errorf("silent, a trace no longer written: %q", s)
	}
	o.activity.saw()
	if s := o.progressLine(time.Second); s != "" {
		t.Errorf("a line just now: %q, want nothing", s)
	}
}
