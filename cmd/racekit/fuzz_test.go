package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/racekit/racekit/sched"
)

func TestFuzzClassify(t *testing.T) {
	s := &sched.Schedule{Notes: []sched.Note{{Kind: "deadlock", Text: "g0#3 lock a.go:9"}}}
	empty := &sched.Schedule{}
	for _, c := range []struct {
		timedOut      bool
		code          int
		out           string
		s             *sched.Schedule
		outcome, what string
	}{
		{false, 0, "PASS\n", empty, "none", ""},
		{false, 2, "ok\npanic: ERROR1\n\ngoroutine 7 [running]:\n", empty, "panic", "ERROR1"},
		{false, 2, "panic: boom [recovered]\n", empty, "panic", "boom"},
		{false, 1, "--- FAIL: TestA (0.00s)\n    a_test.go:3: bad\n--- FAIL: TestB (0.00s)\nFAIL\n", empty, "test failure", "TestA, TestB"},
		{false, 3, "racekit: deadlock\n", s, "deadlock", "g0#3 lock a.go:9"},
		{false, 2, "fatal error: all goroutines are asleep - deadlock!\n", empty, "deadlock", "fatal error: all goroutines are asleep"},
		{true, -1, "", empty, "timeout", ""},
		{false, 4, "", empty, "exit 4", ""},
	} {
		o, w := classify(c.timedOut, c.code, c.out, c.s)
		if o != c.outcome || w != c.what {
			t.Errorf("classify(%q, %d) = %q, %q; want %q, %q", c.out, c.code, o, w, c.outcome, c.what)
		}
	}
}

func TestFuzzResolution(t *testing.T) {
	note := sched.FormatRace(
		sched.Point{G: "g0.2", N: 0, Kind: sched.KindWrite, Site: "/x/fig1.go:28"},
		sched.Point{G: "g0.1", N: 4, Kind: sched.KindRead, Site: "/x/fig1.go:21"})
	if got, want := resolution(note), "/x/fig1.go:28 (write) before /x/fig1.go:21 (read)"; got != want {
		t.Errorf("resolution = %q, want %q", got, want)
	}
}

func TestFuzzReadPairs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pairs")
	data := "# candidates\na.go:5~a.go:7\n{\"a\":\"/m/b.go:3:4\",\"b\":\"/m/b.go:9:2\",\"object\":\"x\"}\na.go:5~a.go:7\n"
	if err := os.WriteFile(p, []byte(data), 0o666); err != nil {
		t.Fatal(err)
	}
	got, err := readPairs(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.go:5~a.go:7", "/m/b.go:3~/m/b.go:9"}; !reflect.DeepEqual(got, want) {
		t.Errorf("readPairs = %q, want %q", got, want)
	}
	if err := os.WriteFile(p, []byte("a.go:5\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := readPairs(p); err == nil {
		t.Error("a line without a pair was accepted")
	}
}

func TestFuzzGoTestArgs(t *testing.T) {
	got := goTestArgs([]string{"-run", "^TestX$", "-v", "-count=3", "-test.short", "-myflag", "x"})
	want := []string{"-test.run", "^TestX$", "-test.v", "-test.count=3", "-test.short", "-myflag", "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("goTestArgs = %q, want %q", got, want)
	}
}
