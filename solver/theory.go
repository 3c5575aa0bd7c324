package solver

import "slices"

// graph is the order theory's state: the edges of the true atoms, with
// incremental cycle detection. Edges are added in trail order and removed
// in reverse (on backtracking), so each node's out-list is a stack.
//
// The graph keeps a topological numbering ord (Pearce and Kelly, "A
// dynamic topological sort algorithm for directed acyclic graphs", JEA
// 2006): an edge u→v with ord[u] < ord[v] cannot close a cycle and costs
// nothing; otherwise only nodes w with ord[v] ≤ ord[w] ≤ ord[u] can lie on
// a cycle, so the search from v is bounded to them, and the affected nodes
// are renumbered. Removing edges never invalidates the numbering.
type graph struct {
	out   [][]edge
	stack []edgeRec // every edge, in order of addition

	ord  []int32
	node []int32 // node at each ord value (inverse of ord)

	// search scratch, indexed by node<<1 (forward) and node<<1|1 (backward)
	mark    []uint32
	stamp   uint32
	parent  []int32 // previous state
	via     []Lit   // literal of the edge into the state
	work    []int32
	deltaF  []int32
	deltaB  []int32
	scratch []int32
}

type edge struct {
	to  int32
	lit Lit
}

type edgeRec struct {
	from     int32
	trailPos int
}

func (g *graph) grow(n int) {
	for len(g.out) < n {
		i := int32(len(g.out))
		g.out = append(g.out, nil)
		g.ord = append(g.ord, i)
		g.node = append(g.node, i)
		g.mark = append(g.mark, 0, 0)
		g.parent = append(g.parent, 0, 0)
		g.via = append(g.via, 0, 0)
	}
}

// add inserts the edge u→v for the literal l (true at trail position
// pos) and returns the literals of a cycle through it, or nil. The edge
// stays in the graph either way (the conflict makes the solver backtrack
// over it).
func (g *graph) add(u, v int32, l Lit, pos int) []Lit {
	cyc := g.addOrdered(u, v, l)
	g.out[u] = append(g.out[u], edge{v, l})
	g.stack = append(g.stack, edgeRec{u, pos})
	return cyc
}

// undo removes the edges added at trail positions ≥ n.
func (g *graph) undo(n int) {
	for len(g.stack) > 0 {
		r := g.stack[len(g.stack)-1]
		if r.trailPos < n {
			break
		}
		g.stack = g.stack[:len(g.stack)-1]
		g.out[r.from] = g.out[r.from][:len(g.out[r.from])-1]
	}
}

func (g *graph) next() uint32 {
	g.stamp++
	if g.stamp == 0 {
		clear(g.mark)
		g.stamp = 1
	}
	return g.stamp
}

// addOrdered is Pearce-Kelly's insertion of the edge u→v.
func (g *graph) addOrdered(u, v int32, l Lit) []Lit {
	lb, ub := g.ord[v], g.ord[u]
	if ub < lb {
		return nil // already in order
	}
	if u == v {
		return []Lit{l}
	}
	st := g.next()
	// Forward from v through nodes numbered at most ord[u].
	g.deltaF = g.deltaF[:0]
	g.work = append(g.work[:0], v)
	g.mark[v<<1] = st
	g.parent[v<<1] = -1
	for len(g.work) > 0 {
		w := g.work[len(g.work)-1]
		g.work = g.work[:len(g.work)-1]
		g.deltaF = append(g.deltaF, w)
		for _, e := range g.out[w] {
			x := e.to
			if x == u {
				g.parent[u<<1] = w << 1
				g.via[u<<1] = e.lit
				return g.trace(u<<1, v<<1, l)
			}
			if g.mark[x<<1] != st && g.ord[x] < ub {
				g.mark[x<<1] = st
				g.parent[x<<1] = w << 1
				g.via[x<<1] = e.lit
				g.work = append(g.work, x)
			}
		}
	}
	// Backward from u through nodes numbered at least ord[v]: the graph
	// keeps no in-lists, so find them as the nodes in [lb, ub] that reach
	// u, scanning that window from the top.
	g.deltaB = g.deltaB[:0]
	g.mark[u<<1|1] = st
	for i := ub; i >= lb; i-- {
		w := g.node[i]
		if w == u {
			g.deltaB = append(g.deltaB, w)
			continue
		}
		if g.mark[w<<1] == st {
			continue // in deltaF: reaches no node of deltaB (else a cycle)
		}
		for _, e := range g.out[w] {
			if g.mark[e.to<<1|1] == st {
				g.mark[w<<1|1] = st
				g.deltaB = append(g.deltaB, w)
				break
			}
		}
	}
	// Renumber: deltaB (in order) before deltaF (in order), on the union
	// of their old numbers.
	sortByOrd(g.deltaB, g.ord)
	sortByOrd(g.deltaF, g.ord)
	g.scratch = g.scratch[:0]
	for _, w := range g.deltaB {
		g.scratch = append(g.scratch, g.ord[w])
	}
	for _, w := range g.deltaF {
		g.scratch = append(g.scratch, g.ord[w])
	}
	sortInt32(g.scratch)
	i := 0
	for _, w := range g.deltaB {
		g.ord[w] = g.scratch[i]
		g.node[g.scratch[i]] = w
		i++
	}
	for _, w := range g.deltaF {
		g.ord[w] = g.scratch[i]
		g.node[g.scratch[i]] = w
		i++
	}
	return nil
}

// trace collects the literals on the search path from state from back to
// state to, plus the new edge's literal.
func (g *graph) trace(from, to int32, l Lit) []Lit {
	cyc := []Lit{l}
	for s := from; s != to; s = g.parent[s] {
		cyc = append(cyc, g.via[s])
	}
	return cyc
}

// insertionMax is the length up to which the sorts below use insertion
// sort (Pearce-Kelly's affected regions are usually tiny); longer ones, as
// in long traces' windows, would be quadratic.
const insertionMax = 32

func sortByOrd(ws []int32, ord []int32) {
	if len(ws) > insertionMax {
		slices.SortFunc(ws, func(a, b int32) int { return int(ord[a]) - int(ord[b]) })
		return
	}
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ord[ws[j]] < ord[ws[j-1]]; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

func sortInt32(a []int32) {
	if len(a) > insertionMax {
		slices.Sort(a)
		return
	}
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
