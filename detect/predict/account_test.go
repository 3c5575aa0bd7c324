package predict

import (
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// accountTrace is the trace of thesis Figure 4.7 (the Account case study,
// section 4.5). Sites are source lines: T1's update of its balance x1
// (line 4) and of the bank total y (line 5), T2's of x2 (line 7) and y
// (line 8), and main's final reads of x1, x2 and y (lines 16, 17, 19).
// Main waits for T1 and T2 with Thread.isAlive (line 11), a native method:
// in the incomplete trace each call is a BarrierPair reaching the thread
// object (e18-e21). ThreadEnd(t) is an event on the thread object t in the
// thesis' model; racekit's End carries no object, so each thread's last
// act is written out as what the JVM does at the end of a thread: a write
// of its status word t1/t2 (value 1: terminated). In the complete trace,
// isAlive's hidden read of that word (value 1) is visible inside the call.
func accountTrace(complete bool) *trace.Trace {
	b := trace.NewBuilder()
	b.Begin("T0")
	b.WriteV("T0", "y", 0, "Account.java:1")  // e1
	b.WriteV("T0", "x1", 0, "Account.java:2") // e2
	b.WriteV("T0", "x2", 0, "Account.java:2") // e3
	b.Fork("T0", "T1", "Account.java:3")      // e4
	b.Fork("T0", "T2", "Account.java:3")      // e5
	b.Begin("T1")                             // e6
	b.ReadV("T1", "x1", 0, "Account.java:4")  // e7
	b.WriteV("T1", "x1", 100, "Account.java:4")
	b.ReadV("T1", "y", 0, "Account.java:5") // e9
	b.WriteV("T1", "y", 100, "Account.java:5")
	b.WriteV("T1", "t1", 1, "Thread.java:exit")
	b.End("T1")                              // e11
	b.Begin("T2")                            // e12
	b.ReadV("T2", "x2", 0, "Account.java:7") // e13
	b.WriteV("T2", "x2", 200, "Account.java:7")
	b.ReadV("T2", "y", 100, "Account.java:8") // e15
	b.WriteV("T2", "y", 300, "Account.java:8")
	b.WriteV("T2", "t2", 1, "Thread.java:exit")
	b.End("T2")                   // e17
	b.Call("T0", "isAlive", "t1") // e18
	if complete {
		b.ReadV("T0", "t1", 1, "Thread.java:isAlive")
	}
	b.Ret("T0", "isAlive")        // e19
	b.Call("T0", "isAlive", "t2") // e20
	if complete {
		b.ReadV("T0", "t2", 1, "Thread.java:isAlive")
	}
	b.Ret("T0", "isAlive")                      // e21
	b.ReadV("T0", "x1", 100, "Account.java:16") // e22
	b.ReadV("T0", "x2", 200, "Account.java:17") // e23
	b.ReadV("T0", "y", 300, "Account.java:19")  // e24
	return b.Trace()
}

// TestAccountCaseStudy reproduces section 4.5: on the incomplete trace hb
// reports the true race (5,8) and four false alarms, rdit only (5,8); the
// ground truth is mcm on the complete trace. The thesis lists the false
// alarms as (4,16), (5,17), (5,19), (8,19); in Figure 4.7's trace the four
// conflicting pairs hb cannot order are x1 (4,16), x2 (7,17), and y (5,19)
// and (8,19): (5,17) pairs T1's update of y with main's read of x2, which
// do not conflict, so we read it as (7,17). mcm on the incomplete trace
// (BarrierPairs ignored) raises the same four false alarms as hb: only the
// BarrierPairs rule them out.
func TestAccountCaseStudy(t *testing.T) {
	part, full := accountTrace(false), accountTrace(true)
	// The status word's own pair (exit vs isAlive) is the JVM's, which
	// synchronizes it internally: not part of the program's races.
	truth := slices.DeleteFunc(label(full, runDetector(full, NewMCM(nil, whole()))), func(s string) bool {
		return strings.Contains(s, "Thread.java")
	})
	if want := []string{"Account.java:5-Account.java:8"}; !slices.Equal(truth, want) {
		t.Fatalf("ground truth (mcm on the complete trace) %v, want %v", truth, want)
	}
	hbGot := label(part, hbPairs(part))
	wantHB := []string{"Account.java:16-Account.java:4", "Account.java:17-Account.java:7",
		"Account.java:19-Account.java:5", "Account.java:19-Account.java:8", "Account.java:5-Account.java:8"}
	if !slices.Equal(hbGot, wantHB) {
		t.Errorf("hb: %v, want %v", hbGot, wantHB)
	}
	rd := NewRDIT(nil, whole())
	if got := label(part, runDetector(part, rd)); !slices.Equal(got, truth) {
		t.Errorf("rdit: %v, want only the true race %v", got, truth)
	}
	for _, w := range rd.Witnesses() {
		if err := CheckWitness(part, &w); err != nil {
			t.Error(err)
		}
	}
	mcmGot := label(part, runDetector(part, NewMCM(nil, whole())))
	t.Logf("incomplete trace: hb %v; mcm %v; rdit %v", hbGot, mcmGot, truth)
	if len(mcmGot) <= 1 {
		t.Errorf("mcm on the incomplete trace should raise the false alarms, got %v", mcmGot)
	}
}
