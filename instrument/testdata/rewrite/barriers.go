package p

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

type T struct {
	buf  bytes.Buffer
	next *T
	data []int
	m    map[string]int
}

var (
	global T
	gs     []int
)

// Calls of pointer-free values need no BarrierPair.
func pure(n int, s string) string {
	x := strconv.Itoa(n) + strings.ToUpper(s)
	return x + fmt.Sprint(n)
}

// Calls in statements: operands evaluated again when that is harmless,
// through temporaries otherwise.
func stmts(t *T, s []int, b *bytes.Buffer) {
	sort.Ints(s)
	b.Reset()
	global.buf.Reset()
	t.buf.Reset()
	sort.Ints(t.data)
	i, found := slices.BinarySearch(s, 3)
	data, err := json.Marshal(t)
	_, _, _, _ = i, found, data, err
	gs = slices.Clone(s)
	x := slices.Index(t.data, 1)
	var buf bytes.Buffer
	buf.Grow(x)
	t.next.buf.Grow(len(
		s))
	sort.Slice(s, func(i, j int) bool {
		return s[i] < s[j]
	})
	s = append(s, slices.Max(s))
}

// Calls inside expressions: wrapped when their operands are simple.
func exprs(t *T, s []int) int {
	if slices.Contains(s, 2) {
		return 1
	}
	n := len(slices.Repeat(s, 2))
	if i := slices.Index(s, 1); i > 0 {
		n += i
	}
	return slices.Index(t.data, 3) + n
}

// Left alone: several results in an expression, go and defer, interface
// methods and func values.
func others(s []int, b *bytes.Buffer, e error) (int, bool) {
	defer b.Reset()
	f := slices.Index[[]int]
	_ = f(s, 1) + len(e.Error())
	for i := 0; i < 2; b.Reset() {
		i++
	}
	return slices.BinarySearch(s, 1)
}

type myErr struct{ msg string }

func (e *myErr) Error() string { return e.msg }

func errs(err error) bool {
	var target *myErr
	return errors.As(err, &target)
}

type wrapped struct {
	*bytes.Buffer
	strings.Builder
}

func mk() *T { return &T{} }

// Receivers: embedded fields, values, method expressions; variadic
// arguments; labels.
func recvs(w wrapped, ws []wrapped, args []any, s []int) string {
	w.Buffer.Reset()
	w.Truncate(0)
	w.Builder.Grow(1)
	ws[0].Builder.Grow(2)
	mk().buf.Reset()
	(*bytes.Buffer).Reset(w.Buffer)
	_ = fmt.Sprintf("%v %v", args...)
	_ = fmt.Sprintf("%v", ws)
	s = slices.Insert[[]int](s, 0, 1, 2)
L:
	sort.Ints(s)
	if len(s) > 3 {
		goto L
	}
	return w.Builder.String()
}

// Two operands that are not simple: temporaries, in their order.
func two(t *T, ok bool) bool {
	ok = slices.Equal(t.data, t.next.data)
	copy(t.data, t.next.data)
	return ok
}
