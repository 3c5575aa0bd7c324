package jobsys

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrTransient is the error of an attempt that may succeed if retried.
var ErrTransient = errors.New("transient failure")

// handler computes a job's output from its input; attempt counts from 1.
type handler func(input string, attempt int) (string, error)

// handlers maps kinds to their computation.
var handlers = map[Kind]handler{
	KindWordCount: wordCount,
	KindChecksum:  checksum,
	KindSort:      sortWords,
	KindFlaky:     flaky,
	KindSlow:      slow,
	KindPrimes:    primes,
}

func wordCount(input string, _ int) (string, error) {
	counts := map[string]int{}
	for _, w := range strings.Fields(strings.ToLower(input)) {
		w = strings.Trim(w, ".,;:!?\"'()")
		if w != "" {
			counts[w]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Itoa(counts[k])
	}
	return strings.Join(parts, " "), nil
}

func checksum(input string, _ int) (string, error) {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(input))), nil
}

func sortWords(input string, _ int) (string, error) {
	ws := strings.Fields(input)
	sort.Strings(ws)
	return strings.Join(ws, " "), nil
}

// flaky fails until its attempt number reaches the number in its input.
func flaky(input string, attempt int) (string, error) {
	need, err := strconv.Atoi(strings.TrimSpace(input))
	if err != nil {
		return "", fmt.Errorf("flaky: bad input %q", input)
	}
	if attempt < need {
		return "", fmt.Errorf("attempt %d: %w", attempt, ErrTransient)
	}
	return "ok after " + strconv.Itoa(attempt), nil
}

// slow takes about the number of milliseconds in its input.
func slow(input string, _ int) (string, error) {
	ms, err := strconv.Atoi(strings.TrimSpace(input))
	if err != nil {
		return "", fmt.Errorf("slow: bad input %q", input)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return "slept " + strconv.Itoa(ms) + "ms", nil
}

// primes counts the primes below the number in its input (a sieve).
func primes(input string, _ int) (string, error) {
	n, err := strconv.Atoi(strings.TrimSpace(input))
	if err != nil || n < 0 || n > 1<<20 {
		return "", fmt.Errorf("primes: bad input %q", input)
	}
	composite := make([]bool, n)
	count := 0
	for i := 2; i < n; i++ {
		if composite[i] {
			continue
		}
		count++
		for k := i * i; k < n; k += i {
			composite[k] = true
		}
	}
	return strconv.Itoa(count), nil
}

// Expected computes, sequentially, what a spec's job must return (for
// the tests and the driver's checks).
func Expected(s Spec) (string, error) {
	h, ok := handlers[s.Kind]
	if !ok {
		return "", fmt.Errorf("unknown job kind %q", s.Kind)
	}
	var out string
	var err error
	for a := 1; a <= s.Attempts; a++ {
		if out, err = h(s.Input, a); err == nil || !errors.Is(err, ErrTransient) {
			return out, err
		}
	}
	return out, err
}
