package callers

import (
	"embed"
	"os"
	"testing"
)

// The package's own files, embedded: under racekit test they are the
// user's, not the instrumented copies, and racekit's added TestMain is not
// among them (fasthttp's tests serve fs.go from an embed.FS).
//
//go:embed *.go
var sources embed.FS

func TestEmbedsOwnSource(t *testing.T) {
	entries, err := sources.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := sources.ReadFile(e.Name())
		disk, err := os.ReadFile(e.Name())
		if err != nil || string(b) != string(disk) {
			t.Errorf("%s: embedded %d bytes, the file has %d (%v)", e.Name(), len(b), len(disk), err)
		}
		t.Logf("%s: %d bytes", e.Name(), len(b))
	}
}
