package trace

import (
	"math/rand/v2"
	"testing"
)

// Validate's fast path accepts no event its general case (validate)
// rejects: every op, every combination of flags, with and without an
// address set, values at random and valid messages and spans.
func TestValidateFastPathAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []uint64{0, 1, uint64(MsgSendOf(4)), uint64(MsgRange(MsgRecvd, 3, 3)), uint64(MsgOf(MsgClose)), 1 << 63}
	if sp, ok := MakeSpan(8, 4); ok {
		values = append(values, uint64(sp))
	}
	accepted := 0
	for op := Op(0); op <= numOps; op++ {
		for flags := Flags(0); flags < 64; flags++ {
			for _, addrs := range [][]uint64{nil, {0x10}} {
				for _, v := range append(values, rng.Uint64()) {
					for _, obj := range []uint64{0x10, 1 << 40, 0x10 | AtomicLockBit} {
						e := Event{Op: op, Flags: flags, Addrs: addrs, Value: v, Obj: obj}
						if e.Validate() == nil {
							accepted++
							if err := e.validate(); err != nil {
								t.Fatalf("%+v: Validate accepts it, validate says %v", e, err)
							}
						}
					}
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no valid event among the cases")
	}
}
