package wcp_test

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/trace/text"
)

// Channel events with their message are hard edges per message, as in hb
// (detect/clock's chan.go): wcp reports what hb reports on them.
func TestChanMessagesAsHardEdges(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		races     int
	}{
		{"two producers, the first message received", `
M|fork(P1)
M|fork(P2)
M|fork(C)
P1|w(x)|wx
P1|snd(c=send/2)
P1|rcv(c=sent/1)
P2|w(y)|wy
P2|snd(c=send/2)
P2|rcv(c=sent/2)
C|snd(c=recv)
C|rcv(c=recvd/1)
C|r(x)|rx
C|r(y)|ry
`, 1},
		{"semaphore of capacity 1", `
M|fork(A)
M|fork(B)
A|snd(s=send/1)
A|rcv(s=sent/1)
A|w(x)|wa
A|snd(s=recv)
A|rcv(s=recvd/1)
B|snd(s=send/1)
B|rcv(s=sent/2)
B|w(x)|wb
B|snd(s=recv)
B|rcv(s=recvd/2)
`, 0},
	} {
		tr, err := text.Parse("t.rktx", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		wp, hp := runWCP(t, tr).c.Pairs(), runHB(t, tr).c.Pairs()
		if len(hp) != tc.races || !slices.Equal(wp, hp) {
			t.Errorf("%s: wcp %v, hb %v, want %d races from both", tc.name, wp, hp, tc.races)
		}
	}
}
