package testout

import (
	"syscall"
	"testing"
)

// An analysis's thread runs at nice analysisNice or lower priority.
func TestYieldToTests(t *testing.T) {
	nice := func() int {
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
		if err != nil {
			t.Error(err)
		}
		return 20 - p // the raw system call's value
	}
	before := nice()
	got := make(chan int)
	go func() {
		yieldToTests()
		got <- nice()
	}()
	if n := <-got; n < analysisNice || n < before {
		t.Errorf("the analysis's thread at nice %d, want at least %d", n, max(analysisNice, before))
	}
}
