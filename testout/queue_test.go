package testout

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// queuedLines reads its input to the end while nobody takes the lines
// (racekit busy analyzing a trace): the writer, standing for go test
// copying a test binary's output, finishes; every line then comes out, in
// order.
func TestQueuedLinesNeverBlockTheWriter(t *testing.T) {
	pr, pw := io.Pipe()
	lines := queuedLines(pr, new(activity))
	const n = 100000 // about 4 MB, far beyond any pipe buffer
	wrote := make(chan bool)
	go func() {
		for i := 0; i < n; i++ {
			fmt.Fprintf(pw, "line %d of the test binary's output\n", i)
		}
		pw.Close()
		close(wrote)
	}()
	select {
	case <-wrote:
	case <-time.After(2 * time.Minute): // a deadlock, not a slow machine
		t.Fatal("the writer blocked while no line was taken")
	}
	i := 0
	for l := range lines {
		if want := fmt.Sprintf("line %d of the test binary's output\n", i); l != want {
			t.Fatalf("line %d is %q, want %q", i, l, want)
		}
		i++
	}
	if i != n {
		t.Fatalf("%d lines, want %d", i, n)
	}
	// A last line without its newline comes out as it is.
	var got []string
	for l := range queuedLines(strings.NewReader("a\nb"), new(activity)) {
		got = append(got, l)
	}
	if strings.Join(got, "|") != "a\n|b" {
		t.Fatalf("lines %q, want [\"a\\n\" \"b\"]", got)
	}
}
