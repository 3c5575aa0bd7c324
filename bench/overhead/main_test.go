package main

import (
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range xs {
			ds = append(ds, time.Duration(x)*time.Millisecond)
		}
		return ds
	}
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(7), 7 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 9, 2), 3 * time.Millisecond},
	} {
		in := append([]time.Duration(nil), c.in...)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("median reordered its argument: %v", c.in)
			}
		}
	}
}

// The table shows both the best runs and the medians, each against its
// own baseline: a configuration whose best run is fast but whose typical
// run is slow shows in the second table only.
func TestTableMedians(t *testing.T) {
	r := testRow("x", 120*time.Millisecond, 220*time.Millisecond)
	r.medPlain, r.medRace = 110*time.Millisecond, 440*time.Millisecond
	var b strings.Builder
	table(&b, []row{r}, 5)
	best, med, ok := strings.Cut(b.String(), "medians")
	if !ok {
		t.Fatalf("no median table:\n%s", b.String())
	}
	if !strings.Contains(best, "| x | 0.100s | 4.00x | 1.20x |") || strings.Contains(best, "2.00x") {
		t.Errorf("best-run table wrong:\n%s", best)
	}
	if !strings.Contains(med, "| x | 0.110s | 4.00x | 2.00x |") || !strings.Contains(med, " 0.50 | 0.50 | 0.50 |") {
		t.Errorf("median table wrong:\n%s", med)
	}
}

// With -before's times, a third table gives each before config's
// slowdown before and after and after's time over before's; a subject
// measured without them is not in it.
func TestTableBeforeAfter(t *testing.T) {
	a, b := testRow("withbefore", 300*time.Millisecond, 300*time.Millisecond), testRow("without", 300*time.Millisecond, 300*time.Millisecond)
	a.before = []time.Duration{150 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond}
	a.medBefore = []time.Duration{300 * time.Millisecond, 200 * time.Millisecond, 600 * time.Millisecond}
	var out strings.Builder
	table(&out, []row{a, b}, 3)
	_, ba, ok := strings.Cut(out.String(), "Before (-before's binaries)")
	if !ok {
		t.Fatalf("no before/after table:\n%s", out.String())
	}
	if want := "| withbefore | 0.100s | 4.00x | 1.50x | 3.00x | 2.00 / 1.00 | 6.00x | 3.00x | 0.50 / 1.50 | 12.00x | 3.00x | 0.25 / 0.50 |"; !strings.Contains(ba, want) {
		t.Errorf("before/after row wrong, want %q in:\n%s", want, ba)
	}
	if strings.Contains(ba, "without") {
		t.Errorf("a subject without -before's times is in the table:\n%s", ba)
	}
	var none strings.Builder
	table(&none, []row{b}, 3)
	if strings.Contains(none.String(), "Before (") {
		t.Errorf("a before/after table without -before:\n%s", none.String())
	}
}

// testRow is a subject's row with a baseline of 100 ms and -race at 400
// ms (best and median), and every configuration at best and med.
func testRow(name string, best, med time.Duration) row {
	r := row{s: subject{name: name}, plain: 100 * time.Millisecond, race: 400 * time.Millisecond,
		medPlain: 100 * time.Millisecond, medRace: 400 * time.Millisecond}
	for range configs {
		r.times = append(r.times, best)
		r.medTimes = append(r.medTimes, med)
		r.mbps = append(r.mbps, 1)
		r.events = append(r.events, 1)
	}
	return r
}
