package p

import "time"

type poller struct {
	t *time.Timer
}

// Timers and sleeps go through rt's hooks (the virtual clock of its
// controlled scheduler); tickers keep real timers.
func timers(done chan struct{}, p *poller) bool {
	time.Sleep(10 * time.Microsecond)
	t := time.NewTimer(time.Millisecond)
	defer t.Stop()
	p.t = t
	p.t.Reset(2 * time.Millisecond)
	select {
	case <-done:
		return true
	case <-t.C:
	case <-time.After(time.Second):
	}
	if time.Now().After(time.Time{}) { // time.Time.After: no timer
		p.t = nil
	}
	tk := time.NewTicker(time.Millisecond)
	tk.Stop()
	return t.Stop()
}
