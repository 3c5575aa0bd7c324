package sample

import "github.com/racekit/racekit/trace"

// Shown returns the events of tr that keep keeps, without the function
// frames that hold no other kept event (directly, or in a frame they call
// that does): their FuncEnter and FuncExit both. It is what a sampled run
// records of unsampled calls (package rt's Enter records such a frame only
// when an event is recorded inside it), so a sampled run and Filter's
// output of a full run are compared through Shown on both sides: the same
// events, in the same frames wherever a frame holds one. (A sampled run
// records its sampled frames even when empty; Shown drops those too.)
func Shown(tr *trace.Trace, keep func(*trace.Event) bool) []*trace.Event {
	type frame struct {
		e     *trace.Event
		shown bool
	}
	var out []*trace.Event
	stacks := map[trace.GID][]frame{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if keep != nil && !keep(e) {
			continue
		}
		st := stacks[e.G]
		switch e.Op {
		case trace.OpFuncEnter:
			stacks[e.G] = append(st, frame{e: e})
			continue
		case trace.OpFuncExit:
			if n := len(st); n > 0 {
				stacks[e.G] = st[:n-1]
				if !st[n-1].shown {
					continue
				}
			}
			out = append(out, e)
			continue
		}
		for j := range st {
			if !st[j].shown {
				st[j].shown = true
				out = append(out, st[j].e)
			}
		}
		out = append(out, e)
	}
	return out
}
