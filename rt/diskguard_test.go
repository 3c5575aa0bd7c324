package rt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMinFreeOf(t *testing.T) {
	for in, want := range map[string]uint64{
		"": defaultMinFree, "0": 0, "1024": 1024, "512M": 512 << 20, "2g": 2 << 30,
		"1GB": 1 << 30, "3T": 3 << 40, "lots": defaultMinFree, "-1": defaultMinFree,
		"99999999999999999999T": defaultMinFree,
	} {
		if got := minFreeOf(in); got != want {
			t.Errorf("minFreeOf(%q) = %d, want %d", in, got, want)
		}
	}
}

// With its file system under the free space it must leave, the writer
// stops tracing at its next write: the file keeps what it wrote before,
// read as a run that stopped, and the program goes on untraced. With
// space enough, nothing changes.
func TestDiskGuard(t *testing.T) {
	defer func(f func(*os.File) (uint64, bool), every int64) { freeSpace, guardEvery = f, every }(freeSpace, guardEvery)
	guardEvery = 32 << 10 // the check at every second block written
	for _, tc := range []struct {
		name    string
		free    uint64
		stopped bool
	}{
		{"nearly full", 512 << 20, true},
		{"space enough", 8 << 30, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			freeSpace = func(*os.File) (uint64, bool) { return tc.free, true }
			path := filepath.Join(t.TempDir(), "t.rkt")
			if err := start(path, false); err != nil {
				t.Fatal(err)
			}
			site := RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0})
			x := escape[[1024]uint64]()
			for i := range 200_000 { // several 64 KiB blocks
				W(&x[i*7919%len(x)], site, true) // no runs: one record each
			}
			Finish()
			tr, warns := readBack(t, path)
			cut := strings.Contains(strings.Join(warns, "\n"), "no end block")
			if cut != tc.stopped || tc.stopped && (len(tr.Events) == 0 || len(tr.Events) >= 200_000) {
				t.Errorf("%d events, warnings %q; want a readable prefix: %v", len(tr.Events), warns, tc.stopped)
			}
		})
	}
}
