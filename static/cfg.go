package static

import (
	"golang.org/x/tools/go/ssa"
)

// maxCFGBlocks bounds the block-reachability matrix; larger functions are
// treated as if every block reached every other (conservative for the
// filters, which then keep warnings).
const maxCFGBlocks = 4000

// cfgInfo answers reachability questions on one function's control-flow
// graph at instruction granularity.
type cfgInfo struct {
	fn    *ssa.Function
	words int
	reach []uint64 // reach[a*words + b/64] bit b%64: a path of ≥1 edges from a to b
	big   bool
}

func newCFG(fn *ssa.Function) *cfgInfo {
	n := len(fn.Blocks)
	c := &cfgInfo{fn: fn}
	if n > maxCFGBlocks {
		c.big = true
		return c
	}
	c.words = (n + 63) / 64
	c.reach = make([]uint64, n*c.words)
	stack := make([]int, 0, n)
	for a := 0; a < n; a++ {
		row := c.reach[a*c.words : (a+1)*c.words]
		stack = stack[:0]
		for _, s := range fn.Blocks[a].Succs {
			if row[s.Index/64]&(1<<(s.Index%64)) == 0 {
				row[s.Index/64] |= 1 << (s.Index % 64)
				stack = append(stack, s.Index)
			}
		}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, s := range fn.Blocks[x].Succs {
				if row[s.Index/64]&(1<<(s.Index%64)) == 0 {
					row[s.Index/64] |= 1 << (s.Index % 64)
					stack = append(stack, s.Index)
				}
			}
		}
	}
	return c
}

// reaches reports a path of at least one edge from block a to block b.
func (c *cfgInfo) reaches(a, b int) bool {
	if c.big {
		return true
	}
	return c.reach[a*c.words+b/64]&(1<<(b%64)) != 0
}

// after reports whether p can execute after e on some path.
func (c *cfgInfo) after(e, p progPoint) bool {
	return e.block == p.block && e.index < p.index || c.reaches(int(e.block), int(p.block))
}

// avoiding returns a predicate for the points reachable from start (after
// it) along paths that do not pass a barrier point; barrier points are
// themselves reached but not passed. A barrier at index -1 of a block is
// on its entry: nothing of the block is reached without passing it.
func (c *cfgInfo) avoiding(start progPoint, barrier map[progPoint]bool) func(progPoint) bool {
	fn := c.fn
	// prefix[b] = number of leading instructions of b reached when b is
	// entered at its top; -1 if not entered.
	prefix := make([]int32, len(fn.Blocks))
	for i := range prefix {
		prefix[i] = -1
	}
	scan := func(b int, from int32) (end int32, through bool) {
		if from == 0 && barrier[progPoint{int32(b), -1}] {
			return 0, false // a barrier on entry to b (a select case)
		}
		instrs := fn.Blocks[b].Instrs
		for i := from; i < int32(len(instrs)); i++ {
			if barrier[progPoint{int32(b), i}] {
				return i + 1, false
			}
		}
		return int32(len(instrs)), true
	}
	startEnd, through := scan(int(start.block), start.index+1)
	var stack []int
	if through {
		for _, s := range fn.Blocks[start.block].Succs {
			stack = append(stack, s.Index)
		}
	}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if prefix[b] >= 0 {
			continue
		}
		end, thr := scan(b, 0)
		prefix[b] = end
		if thr {
			for _, s := range fn.Blocks[b].Succs {
				if prefix[s.Index] < 0 {
					stack = append(stack, s.Index)
				}
			}
		}
	}
	return func(p progPoint) bool {
		if p.block == start.block && p.index > start.index && p.index < startEnd {
			return true
		}
		return p.index < prefix[p.block]
	}
}

// exitAvoiding returns a predicate for the points from which the
// function's exit (a return) can be reached without passing a barrier.
func (c *cfgInfo) exitAvoiding(barrier map[progPoint]bool) func(progPoint) bool {
	fn := c.fn
	n := len(fn.Blocks)
	// ok[b]: from the top of b, an exit is reachable without a barrier.
	ok := make([]bool, n)
	hasBarrier := make([]bool, n)
	isExit := make([]bool, n)
	for _, b := range fn.Blocks {
		if barrier[progPoint{int32(b.Index), -1}] {
			hasBarrier[b.Index] = true
		}
		for i, instr := range b.Instrs {
			if barrier[progPoint{int32(b.Index), int32(i)}] {
				hasBarrier[b.Index] = true
			}
			if _, r := instr.(*ssa.Return); r {
				isExit[b.Index] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, b := range fn.Blocks {
			if ok[b.Index] || hasBarrier[b.Index] {
				continue
			}
			v := isExit[b.Index]
			for _, s := range b.Succs {
				v = v || ok[s.Index]
			}
			if v {
				ok[b.Index] = true
				changed = true
			}
		}
	}
	return func(p progPoint) bool {
		b := fn.Blocks[p.block]
		for i := p.index + 1; i < int32(len(b.Instrs)); i++ {
			if barrier[progPoint{p.block, i}] {
				return false
			}
		}
		if isExit[p.block] {
			return true
		}
		for _, s := range b.Succs {
			if ok[s.Index] {
				return true
			}
		}
		return false
	}
}

// publishPoints are the instructions that make the object v (allocated in
// this function) reachable by others: storing a pointer to it, passing it
// to a call, capturing it in a closure, sending, returning it or putting
// it in a map. Deriving field or element addresses and reading or writing
// through them does not publish it.
func (fa *funcAnalysis) publishPoints(v ssa.Value) []progPoint {
	if p, ok := fa.pubs[v]; ok {
		return p
	}
	var out []progPoint
	seen := map[ssa.Value]bool{v: true}
	work := []ssa.Value{v}
	for len(work) > 0 {
		d := work[len(work)-1]
		work = work[:len(work)-1]
		refs := d.Referrers()
		if refs == nil {
			continue
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.ChangeType, *ssa.Convert, *ssa.Slice,
				*ssa.MakeInterface, *ssa.ChangeInterface, *ssa.TypeAssert, *ssa.Phi, *ssa.SliceToArrayPointer:
				x := r.(ssa.Value)
				if !seen[x] {
					seen[x] = true
					work = append(work, x)
				}
			case *ssa.UnOp, *ssa.DebugRef, *ssa.BinOp, *ssa.If, *ssa.Lookup, *ssa.Field, *ssa.Index:
				// reads through it or compares it
			case *ssa.Store:
				if r.Val == d {
					out = append(out, fa.ppOf(r))
				}
			case *ssa.Call:
				if isSyncModelCall(r.Common()) {
					continue
				}
				out = append(out, fa.ppOf(r))
			default:
				out = append(out, fa.ppOf(r))
			}
		}
	}
	if fa.pubs == nil {
		fa.pubs = map[ssa.Value][]progPoint{}
	}
	fa.pubs[v] = out
	return out
}

// unpublished reports whether no publication of v can precede pp.
func (fa *funcAnalysis) unpublished(v ssa.Value, pp progPoint) bool {
	c := fa.cfg()
	for _, e := range fa.publishPoints(v) {
		if c.after(e, pp) {
			return false
		}
	}
	return true
}
