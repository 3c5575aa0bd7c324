package trace

import (
	"math/rand/v2"
	"testing"
)

// check's fast path accepts no word its slow path (invalid) rejects (what
// it does not accept goes to the slow path): every kind, both ops,
// payloads at the edges of the layout and at random.
func TestChanMsgCheckFastPathAgrees(t *testing.T) {
	pays := []uint64{0, 1, 2, MsgWide - 1, MsgWide, MsgWide + 1, 1 << MsgLoShift, 1<<MsgLoShift | MsgWide,
		MsgMaxLo << MsgLoShift, MsgMaxLo<<MsgLoShift | 5, MsgMaxCap}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		pays = append(pays, rng.Uint64()&MsgMaxCap, rng.Uint64()&(1<<(MsgLoShift+3)-1))
	}
	n := 0
	for k := range MsgKind(8) {
		for _, pay := range pays {
			m := ChanMsg(uint64(k)<<MsgKindShift | pay)
			for _, op := range []Op{OpSyncRelease, OpSyncAcquire} {
				fast, slow := m.check(op) == nil, m.invalid(k, op) == nil
				if fast != slow {
					t.Fatalf("word %#x on %s: check accepts %v, invalid says valid %v", uint64(m), op, fast, slow)
				}
				if fast {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no valid word among the cases")
	}
}
