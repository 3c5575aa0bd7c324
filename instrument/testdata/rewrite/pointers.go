// Dereferences, fields through pointers, slices, embedded pointers.
package p

type node struct {
	val  int
	next *node
	kids []*node
	inner
	*meta
}

type inner struct{ depth int }
type meta struct{ tag string }

func walk(n *node, s []int, i int) int {
	v := *(&n.val)
	n.val = v + 1
	n.next.val = n.val
	n.kids[i].val++
	n.depth = 2 // through n, a pointer
	n.tag = "t" // through the embedded *meta
	s[i] = s[i+1]
	t := s[1:i]
	pa := &[2]int{}
	pa[0] = len(t)
	return pa[0] + cap(s)
}

func (n node) byValue() int { return n.val }

func calls(n *node) int {
	return n.byValue() // the value receiver copies *n
}
