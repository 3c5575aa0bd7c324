package instrument

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addTestMains gives a test binary what finishes its trace: a TestMain, or
// (examples, or a TestMain that hands m to untraced code) an init that
// turns checkpoints on, in the package's tests and, when the directory has
// external tests too, in theirs, initialized last (a binary that runs no
// test then still ends with a checkpoint: go.uber.org/fx with -run
// matching none warned that its run crashed).
func TestAddTestMains(t *testing.T) {
	cases := []struct {
		name              string
		ext, main, runsM  bool
		example           bool
		wantMain, wantExt string // the generated files' packages, "" none
		wantCheckpoints   bool
	}{
		{name: "plain", wantMain: "p"},
		{name: "external", ext: true, wantMain: "p"},
		{name: "examples", example: true, wantMain: "p", wantCheckpoints: true},
		{name: "examples and external", ext: true, example: true, wantMain: "p", wantExt: "p_test", wantCheckpoints: true},
		{name: "TestMain handing m away, external", ext: true, main: true, wantMain: "p", wantExt: "p_test", wantCheckpoints: true},
		{name: "TestMain running m", ext: true, main: true, runsM: true},
	}
	for _, c := range cases {
		tests := newPkgTests()
		tests.hasTests["example.com/p"] = "p"
		tests.hasSrc["example.com/p"] = true
		tests.testDir["example.com/p"] = "/src/p"
		if c.ext {
			tests.extName["example.com/p"] = "p_test"
		}
		tests.hasTestMain["example.com/p"] = c.main
		tests.runsM["example.com/p"] = c.runsM
		tests.hasExample["example.com/p"] = c.example
		in := &pkgInstrumenter{cfg: &Config{CacheDir: t.TempDir()}, overlay: map[string]string{}, tests: tests}
		if err := in.addTestMains(); err != nil {
			t.Fatal(err)
		}
		for file, want := range map[string]string{"zz_racekit_testmain_test.go": c.wantMain, "zz_racekit_checkpoint_x_test.go": c.wantExt} {
			dst, ok := in.overlay[filepath.Join("/src/p", file)]
			if !ok {
				if want != "" {
					t.Errorf("%s: no %s", c.name, file)
				}
				continue
			}
			src, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if want == "" || !strings.Contains(string(src), "\npackage "+want+"\n") || strings.Contains(string(src), "Checkpoints()") != c.wantCheckpoints {
				t.Errorf("%s: %s is\n%s\nwant package %q, checkpoints %v", c.name, file, src, want, c.wantCheckpoints)
			}
		}
	}
}
