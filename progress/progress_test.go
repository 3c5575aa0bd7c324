package progress

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// An analysis that goes on says how many events it has read, every
// Interval (shortened here); with -q it says nothing.
func TestAnalysisProgress(t *testing.T) {
	defer func(d time.Duration) { Interval = d }(Interval)
	Interval = 10 * time.Millisecond
	for _, quiet := range []bool{false, true} {
		var buf syncBuffer
		p := NewTo(&buf, "test", quiet)
		progress, stop := p.Analysis("/tmp/x/pkg.test.12.rkt")
		if progress != nil {
			progress(4096)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !quiet && !strings.Contains(buf.String(), "\n") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(30 * time.Millisecond)
		stop()
		got := buf.String()
		if quiet && got != "" {
			t.Errorf("-q: %q", got)
		}
		if !quiet && !regexp.MustCompile(`^racekit test: \[[^\]]+\] analyzing pkg\.test\.12\.rkt: 4096 events so far \(`).MatchString(got) {
			t.Errorf("progress lines %q", got)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for Lines' goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
