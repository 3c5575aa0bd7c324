package sample

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sampledCalls runs n calls through a fresh Counter and returns the
// indices (0-based) of the sampled ones as [from, to) intervals.
func sampledCalls(s Schedule, n int) [][2]int {
	var c Counter
	var out [][2]int
	for i := 0; i < n; i++ {
		if !c.Next(&s) {
			continue
		}
		if k := len(out); k > 0 && out[k-1][1] == i {
			out[k-1][1]++
		} else {
			out = append(out, [2]int{i, i + 1})
		}
	}
	return out
}

func policy(t *testing.T, name string) Policy {
	t.Helper()
	p, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TL-Ad (Table 3): bursts of 10 calls at 100%, then rates 10%, 1%, 0.1%:
// calls 0-9, then after a gap of 90 calls 100-109, after 990 more
// 1100-1109, after 9990 more 11100-11109, and every 10000th burst on.
func TestTLAdBackoffSchedule(t *testing.T) {
	p := policy(t, "tl-ad")
	if !slices.Equal(p.Schedule.Gaps, []uint32{90, 990, 9990}) || p.Schedule.Burst != 10 || p.Schedule.Skip != 0 {
		t.Fatalf("tl-ad schedule %+v", p.Schedule)
	}
	got := sampledCalls(p.Schedule, 41200)
	want := [][2]int{{0, 10}, {100, 110}, {1100, 1110}, {11100, 11110}, {21100, 21110}, {31100, 31110}, {41100, 41110}}
	if !slices.Equal(got, want) {
		t.Fatalf("tl-ad sampled calls %v, want %v", got, want)
	}
	if r := p.Nominal(); r != 0.001 {
		t.Errorf("tl-ad long-run rate %v, want 0.001", r)
	}
}

func TestFixedSchedules(t *testing.T) {
	for _, c := range []struct {
		name string
		gap  uint32
		rate float64
	}{
		{"tl-fx", 190, 0.05}, // 10 of every 200 calls
		{"g-fx", 90, 0.10},   // 10 of every 100 calls
	} {
		p := policy(t, c.name)
		if !slices.Equal(p.Schedule.Gaps, []uint32{c.gap}) || p.Schedule.Burst != 10 {
			t.Fatalf("%s schedule %+v", c.name, p.Schedule)
		}
		got := sampledCalls(p.Schedule, 3*int(10+c.gap)+5)
		period := int(10 + c.gap)
		want := [][2]int{{0, 10}, {period, period + 10}, {2 * period, 2*period + 10}, {3 * period, 3*period + 5}}
		if !slices.Equal(got, want) {
			t.Errorf("%s sampled %v, want %v", c.name, got, want)
		}
		if p.Nominal() != c.rate {
			t.Errorf("%s rate %v, want %v", c.name, p.Nominal(), c.rate)
		}
	}
}

// G-Ad: "100%, 50%, 25%, ..., 0.1%": after each burst of 10 the rate
// halves until it would go below 0.1%, where it stays.
func TestGAdBackoffSchedule(t *testing.T) {
	p := policy(t, "g-ad")
	wantGaps := []uint32{10, 30, 70, 150, 310, 630, 1270, 2550, 5110, 9990}
	if !slices.Equal(p.Schedule.Gaps, wantGaps) {
		t.Fatalf("g-ad gaps %v, want %v", p.Schedule.Gaps, wantGaps)
	}
	got := sampledCalls(p.Schedule, 311)
	want := [][2]int{{0, 10}, {20, 30}, {60, 70}, {140, 150}, {300, 310}}
	if !slices.Equal(got, want) {
		t.Fatalf("g-ad first calls sampled %v, want %v", got, want)
	}
}

// UCP: the first 10 calls per (thread, function) are not sampled, every
// later one is.
func TestUCPSchedule(t *testing.T) {
	p := policy(t, "ucp")
	got := sampledCalls(p.Schedule, 5000)
	if want := [][2]int{{10, 5000}}; !slices.Equal(got, want) {
		t.Fatalf("ucp sampled %v, want %v", got, want)
	}
}

// Over a long run each bursty sampler's share of sampled calls is what its
// rates add up to: for TL-Ad over 10^6 calls, 10 + 10 + 10 + 10·(bursts at
// 0.1%).
func TestLongRunRates(t *testing.T) {
	const n = 1_000_000
	for _, name := range []string{"tl-ad", "tl-fx", "g-ad", "g-fx"} {
		p := policy(t, name)
		var c Counter
		sampled := 0
		for i := 0; i < n; i++ {
			if c.Next(&p.Schedule) {
				sampled++
			}
		}
		want := referenceCount(p.Schedule, n)
		if sampled != want {
			t.Errorf("%s: %d of %d calls sampled, reference says %d", name, sampled, n, want)
		}
		rate := float64(sampled) / n
		if rate < p.Nominal() || rate > 1.5*p.Nominal()+0.002 {
			t.Errorf("%s: long-run rate %.5f, nominal %.5f", name, rate, p.Nominal())
		}
	}
}

// referenceSampled expands a schedule into its explicit run list: the
// simple reference the Counter is checked against.
func referenceSampled(s Schedule, n int) []bool {
	out := make([]bool, 0, n)
	add := func(k int, v bool) {
		for i := 0; i < k && len(out) < n; i++ {
			out = append(out, v)
		}
	}
	add(int(s.Skip), false)
	for k := 0; len(out) < n; k++ {
		if s.Burst == 0 {
			add(n, true)
			break
		}
		add(int(s.Burst), true)
		if len(s.Gaps) > 0 {
			add(int(s.Gaps[min(k, len(s.Gaps)-1)]), false)
		}
	}
	return out
}

func referenceCount(s Schedule, n int) int {
	k := 0
	for _, v := range referenceSampled(s, n) {
		if v {
			k++
		}
	}
	return k
}

// randomSchedule is a small schedule with skips, zero gaps and unbounded
// bursts (Burst 0) drawn from r.
func randomSchedule(r *rand.Rand) Schedule {
	s := Schedule{Skip: uint32(r.IntN(4)) * uint32(r.IntN(6)), Burst: uint32(r.IntN(5))}
	for j := r.IntN(5); j > 0; j-- {
		s.Gaps = append(s.Gaps, uint32(r.IntN(3)*r.IntN(8)))
	}
	return s
}

// Differential: random schedules (skips, zero gaps, unbounded bursts)
// against their explicit expansion.
func TestCounterMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 500; i++ {
		s := randomSchedule(r)
		if s.Burst == 0 && r.IntN(2) == 0 {
			s.Burst = 1
		}
		n := 1 + r.IntN(300)
		want := referenceSampled(s, n)
		var c Counter
		for k := 0; k < n; k++ {
			if got := c.Next(&s); got != want[k] {
				t.Fatalf("schedule %+v: call %d sampled=%v, reference %v", s, k, got, want[k])
			}
			if c.Sampling() != want[k] {
				t.Fatalf("schedule %+v: Sampling() after call %d is %v", s, k, c.Sampling())
			}
		}
	}
}

// The shortcuts of Next give its decisions call for call: Take, with its
// caller counting the rest of each run (as rt's loop regions do); Quick,
// with Next called when it declines (as rt's dispatch check does), which
// it does only at the end of a run; QuickSkip likewise, declining in
// bursts too.
func TestShortcutsMatchNext(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 500; i++ {
		s := randomSchedule(r)
		n := 1 + r.IntN(300)
		want := referenceSampled(s, n)
		var take, quick, skip Counter
		var left uint32
		var cur bool
		for k := 0; k < n; k++ {
			if left > 0 {
				left--
			} else {
				cur, left = take.Take(&s)
			}
			if cur != want[k] {
				t.Fatalf("schedule %+v: call %d sampled=%v by Take, reference %v", s, k, cur, want[k])
			}

			inRun := quick.left > 0
			got, ok := quick.Quick()
			if ok != inRun {
				t.Fatalf("schedule %+v: call %d: Quick ok=%v, calls left in the run: %v", s, k, ok, inRun)
			}
			if !ok {
				got = quick.Next(&s)
			}
			if got != want[k] {
				t.Fatalf("schedule %+v: call %d sampled=%v by Quick/Next, reference %v", s, k, got, want[k])
			}

			inGap := skip.left > 0 && !skip.Sampling()
			skipped := skip.QuickSkip()
			if skipped != inGap {
				t.Fatalf("schedule %+v: call %d: QuickSkip=%v, in a run of unsampled calls: %v", s, k, skipped, inGap)
			}
			if got := !skipped && skip.Next(&s); got != want[k] {
				t.Fatalf("schedule %+v: call %d sampled=%v by QuickSkip/Next, reference %v", s, k, got, want[k])
			}
		}
	}
}

func TestBurstyGaps(t *testing.T) {
	s := Bursty(10, 1, 0.5, 0, 2)
	if want := []uint32{0, 10, 1<<32 - 1 - 10, 0}; !slices.Equal(s.Gaps, want) {
		t.Fatalf("Bursty gaps %v, want %v", s.Gaps, want)
	}
}

func TestRandThreshold(t *testing.T) {
	for _, p := range []float64{0, 0.1, 0.25, 1} {
		r := NewRand(42, 3)
		th := Threshold(p)
		const n = 200_000
		k := 0
		for i := 0; i < n; i++ {
			if r.Below(th) {
				k++
			}
		}
		got := float64(k) / n
		if got < p-0.005 || got > p+0.005 {
			t.Errorf("p=%v: share below threshold %.4f", p, got)
		}
	}
}
