package hb

import (
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// TestAccRefRoundTrip: a cell's packed seq and site come back as they
// went in, for values that fit and for those kept aside (refWide), and
// Forget drops the ones kept aside.
func TestAccRefRoundTrip(t *testing.T) {
	var d FastTrack
	cases := []trace.Event{
		{Seq: 0, Site: 0},
		{Seq: 1, Site: 1},
		{Seq: 5_600_000_000, Site: 10_460},
		{Seq: 1<<(63-refSiteBits) - 1, Site: 1<<refSiteBits - 1},
		{Seq: 1 << (63 - refSiteBits), Site: 3},           // seq too large
		{Seq: 42, Site: 1 << refSiteBits},                 // site too large
		{Seq: ^uint64(0), Site: trace.SiteID(^uint32(0))}, // both
	}
	refs := make([]accRef, len(cases))
	for i := range cases {
		refs[i] = d.ref(&cases[i])
	}
	for i, e := range cases {
		seq, site := d.unref(refs[i])
		if seq != e.Seq || site != e.Site {
			t.Errorf("case %d: unref(ref(seq %d, site %d)) = seq %d, site %d", i, e.Seq, e.Site, seq, site)
		}
		if wide := refs[i]&refWide != 0; wide != (i >= 4) {
			t.Errorf("case %d: kept aside %v", i, wide)
		}
	}
	if len(d.wide) != 3 {
		t.Errorf("%d refs kept aside, want 3", len(d.wide))
	}
	d.Forget()
	if d.wide != nil {
		t.Errorf("Forget kept %d refs aside", len(d.wide))
	}
	// The cell's size is what the packing is for: every word the program
	// touched has one.
	if n := unsafe.Sizeof(ftShadow{}); n != 40 {
		t.Errorf("ftShadow is %d bytes, want 40", n)
	}
}
