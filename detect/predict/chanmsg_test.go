package predict

import (
	"testing"

	"github.com/racekit/racekit/trace/text"
)

// The edges back from receives to send completions are the memory model's
// per message (chanmsg.go): the k-th receive before the (k+C)-th send
// completes. Each trace is what rt records (detect/hb's chanmsg_test.go
// documents the words); merged is what mcm and rdit give when the events
// carry no message (every receive begin before every later send
// completion of another goroutine).
func TestChanBackEdges(t *testing.T) {
	cases := []struct {
		name          string
		src           string
		races, merged []string
	}{
		{
			name: "semaphore of capacity 1: receive 1 before send 2 completes",
			src: `
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
`,
		},
		{
			name: "semaphore of capacity 2: both holders write",
			src: `
A|snd(s=send/2)
A|rcv(s=sent/1)
A|w(x)|wa
A|snd(s=recv)
A|rcv(s=recvd/1)
B|snd(s=send/2)
B|rcv(s=sent/2)
B|w(x)|wb
B|snd(s=recv)
B|rcv(s=recvd/2)
`,
			races: []string{"wa-wb"},
		},
		{
			// Go's TestRaceChanAsyncRev: the sender writes after a send
			// to a buffered channel, which does not wait for the receive.
			name: "buffered send does not wait for its receive",
			src: `
M|w(v)|w2
M|snd(c=recv)
G|snd(c=send/10)
G|rcv(c=sent/1)
G|w(v)|w1
M|rcv(c=recvd/1)
`,
			races: []string{"w1-w2"},
		},
		{
			name: "unbuffered send completes after its receive began",
			src: `
M|w(v)|w2
M|snd(c=recv)
G|snd(c=send/0)
G|rcv(c=sent/1)
G|w(v)|w1
M|rcv(c=recvd/1)
`,
		},
		{
			// The receive's message is not known: every receive begin is
			// taken to be the one.
			name: "a receive of unknown message orders the send",
			src: `
M|w(v)|w2
M|snd(c=recv)
G|snd(c=send/0)
G|rcv(c=sent/1)
G|w(v)|w1
M|rcv(c=recv?/1-2000000)
`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := text.Parse("t.rktx", text.WithForks(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			expect(t, tr, tc.races, tc.races)
			expect(t, tr.WithoutMessages(), tc.merged, tc.merged)
		})
	}
}
