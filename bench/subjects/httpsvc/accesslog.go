package httpsvc

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// AccessLog keeps the last lines of the access log in a ring, correctly
// locked.
type AccessLog struct {
	mu    sync.Mutex
	lines []string
	next  int
	total int
}

// NewAccessLog keeps the last n lines.
func NewAccessLog(n int) *AccessLog {
	return &AccessLog{lines: make([]string, n)}
}

// Record appends one line.
func (l *AccessLog) Record(client, method, path string, status int, d time.Duration) {
	line := fmt.Sprintf("%s %s %s %d %dus", client, method, path, status, d.Microseconds())
	l.mu.Lock()
	l.lines[l.next] = line
	l.next = (l.next + 1) % len(l.lines)
	l.total++
	l.mu.Unlock()
}

// Tail returns up to n of the most recent lines, oldest first.
func (l *AccessLog) Tail(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > len(l.lines) {
		n = len(l.lines)
	}
	if n > l.total {
		n = l.total
	}
	out := make([]string, 0, n)
	for i := n; i > 0; i-- {
		out = append(out, l.lines[(l.next-i+len(l.lines))%len(l.lines)])
	}
	return out
}

// Total is the number of lines ever recorded.
func (l *AccessLog) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Grep counts recorded lines (still in the ring) containing s.
func (l *AccessLog) Grep(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if line != "" && strings.Contains(line, s) {
			n++
		}
	}
	return n
}
