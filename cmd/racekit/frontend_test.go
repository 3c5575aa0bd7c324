package main

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

// TestRecordEnv: BarrierPairs are recorded for rdit (-predict, -algo
// rdit) and for a kept trace, and not for the other detectors; dedup keeps
// epochs across acquires for FastTrack alone (with the deadlock and leak
// detectors, which read no access); a RACEKIT_BARRIERS or RACEKIT_DEDUP
// the user set is left to decide.
func TestRecordEnv(t *testing.T) {
	off := "RACEKIT_BARRIERS=0"
	release := "RACEKIT_DEDUP=release"
	for _, tc := range []struct {
		args     []string
		barriers string // RACEKIT_BARRIERS in racekit's environment
		dedup    string // RACEKIT_DEDUP in racekit's environment
		want     []string
	}{
		{nil, "", "", []string{off, release}},
		{[]string{"-deadlocks", "-leaks"}, "", "", []string{off, release}},
		{[]string{"-algo=hb,lockset,hybrid,mcm,wcp", "-deadlocks", "-leaks"}, "", "", []string{off}},
		{[]string{"-algo=fasttrack,wcp"}, "", "", []string{off}},
		{[]string{"-algo=hb"}, "", "", []string{off}},
		{[]string{"-predict"}, "", "", nil},
		{[]string{"-algo=fasttrack,rdit"}, "", "", nil},
		{[]string{"-keep-trace", "/tmp/k"}, "", "", nil},
		{nil, "1", "", []string{release}},
		{nil, "0", "", []string{release}},
		{nil, "", "0", []string{off}},
		{nil, "", "1", []string{off}},
	} {
		t.Setenv("RACEKIT_BARRIERS", tc.barriers)
		t.Setenv("RACEKIT_DEDUP", tc.dedup)
		c := &command{name: "test", flags: flag.NewFlagSet("test", flag.ContinueOnError)}
		c.flags.SetOutput(io.Discard)
		ff := addFrontendFlags(c.flags)
		if _, err := c.parseFlags(append(tc.args, "./p")); err != nil {
			t.Fatal(err)
		}
		algos, ok := ff.checkAlgos(c)
		if !ok {
			t.Fatalf("%q: -algo refused", tc.args)
		}
		if got := ff.recordEnv(algos); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q with RACEKIT_BARRIERS=%q RACEKIT_DEDUP=%q: %q, want %q", tc.args, tc.barriers, tc.dedup, got, tc.want)
		}
	}
}
