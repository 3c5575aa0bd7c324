package main

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

// TestRecordEnv: BarrierPairs are recorded for rdit (-predict, -algo
// rdit) and for a kept trace, and not for the other detectors; a
// RACEKIT_BARRIERS the user set is left to decide.
func TestRecordEnv(t *testing.T) {
	off := []string{"RACEKIT_BARRIERS=0"}
	for _, tc := range []struct {
		args []string
		env  string // RACEKIT_BARRIERS in racekit's environment
		want []string
	}{
		{nil, "", off},
		{[]string{"-algo=hb,lockset,hybrid,mcm,wcp", "-deadlocks", "-leaks"}, "", off},
		{[]string{"-predict"}, "", nil},
		{[]string{"-algo=fasttrack,rdit"}, "", nil},
		{[]string{"-keep-trace", "/tmp/k"}, "", nil},
		{nil, "1", nil},
		{nil, "0", nil},
	} {
		t.Setenv("RACEKIT_BARRIERS", tc.env)
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
			t.Errorf("%q with RACEKIT_BARRIERS=%q: %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
