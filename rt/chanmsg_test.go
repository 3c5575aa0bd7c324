package rt

import (
	"fmt"
	"slices"
	"testing"

	"github.com/racekit/racekit/trace"
)

// msgs lists the channel events with a message on channel c (objects c and
// c+1), as "op=msg".
func msgs(tr *trace.Trace, c uint64) []string {
	var out []string
	for _, e := range tr.Events {
		if e.Flags&trace.FlagMessage != 0 && e.Obj&^1 == c {
			out = append(out, fmt.Sprintf("%s=%s", e.Op, trace.ChanMsg(e.Value)))
		}
	}
	return out
}

// One goroutine's operations never overlap: every number is exact, in the
// channel's order; a select's case not chosen takes its count back, so the
// numbers after it stay exact.
func TestChanMessageNumbers(t *testing.T) {
	c, d := make(chan int, 2), make(chan int, 1)
	tr := record(t, false, func(site uint32) {
		g := SendPreG(c, site, false, nil)
		c <- 1
		SendPost(c, site, g)
		g = SendPreG(c, site, false, nil)
		c <- 2
		SendPost(c, site, g)
		Recv(c, site)
		v, ok := Recv2(c, site)
		_, _ = v, ok
		g = SendPreG(d, site, false, nil)
		d <- 3
		SendPost(d, site, g)
		// A select of a send on c and a receive from d that takes d: its
		// case on c is not chosen.
		SelectSendPre(c, site, false)
		RecvPre(d, site)
		SelectWait(false)
		<-d
		RecvPost(d, site, nil)
		g = SendPreG(c, site, false, nil)
		c <- 4
		SendPost(c, site, g)
		Recv(c, site)
		Close(c, site, false)
		Recv2(c, site)
	})
	got := msgs(tr, chanAddr(c))
	want := []string{
		"snd=send/2", "rcv=sent/1", "snd=send/2", "rcv=sent/2",
		"snd=recv", "rcv=recvd/1", "snd=recv", "rcv=recvd/2",
		"snd=send/2",               // the select's case on c, not chosen
		"snd=send/2", "rcv=sent/3", // exact: the case's count was taken back
		"snd=recv", "rcv=recvd/3",
		"snd=close",
		"snd=recv", "rcv=closed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events on c:\n got %q\nwant %q", got, want)
	}
}
