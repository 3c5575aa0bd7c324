// Objects the standard library allocates and returns get an allocation
// event when the call returns (freshStd): a pointer (rt.New), a slice
// (rt.MakeSlice), a map (rt.MakeMap), a result among several assigned to a
// variable (after the statement). bufio.NewReaderSize may return its
// argument: recorded when it did not (rt.NewUnlessArg). Nothing for a
// deferred call, nor for a call whose result a statement drops (fs.Int
// below: the statement's own CallEnd must end it).
package p

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"container/list"
	"context"
	"flag"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type holder struct{ r *http.Request }

func fresh(ctx context.Context, rd io.Reader, u *url.URL) (*http.Request, error) {
	req, err := http.NewRequest("GET", "/x", nil)
	if err != nil {
		return nil, err
	}
	req = req.WithContext(ctx)
	req.Pattern = "/x"
	var r2, err2 = http.NewRequestWithContext(ctx, "GET", "/y", nil)
	_, _ = r2, err2
	parts := strings.Split("a,b", ",")
	parts[0] = "c"
	q := u.Query()
	q["k"] = nil
	br := bufio.NewReaderSize(rd, 4096)
	_ = br
	h := holder{r: req.Clone(ctx)}
	_ = h
	defer strings.Split("a", ",")
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("n", 1, "")
	m2 := maps.Clone(map[string]int{"a": 1}) // generic: freshHand
	m2["b"] = 2
	z := new(big.Int).SetInt64(1) // the allocation before the receiver's write: rt.W1(rt.New(...))
	_ = z
	bb := bytes.NewBufferString("abc") // its buf too: []byte(s) is new
	_ = bb.String()
	tk := time.NewTicker(time.Second) // the runtime allocates it: freshHand
	tk.Stop()
	var rc io.ReadCloser
	rc, err = gzip.NewReader(rd) // rc is an interface: nothing recorded
	_ = rc
	if r3, err := http.NewRequest("GET", "/z", nil); err == nil {
		return r3, nil
	}
	return req.WithContext(ctx), nil
}

type raw []byte

// A conversion of a string to a slice makes a new array; of a slice to a
// slice, not.
func converted(s string, b raw) int {
	p := []byte(s)
	p[0] = 1
	q := raw("const")
	r := []byte(b)
	return len(p) + len(q) + len(r) + len([]rune(s))
}

type addrs []string

// Literals with their type elided inside another make new arrays and maps
// too: their type is written (a pointer element's as &T{...}).
func elided() map[uint]addrs {
	m := map[uint]addrs{919: {"a"}, 1122: {"b", "c"}}
	nested := [][]int{{1}, {2, 3}, {}}
	byName := map[string]map[string]int{"x": {"y": 1}}
	ptrs := []*holder{{}}
	_, _, _ = nested, byName, ptrs
	return m
}

// bufio's constructors return their argument when it already is a big
// enough Reader or Writer: new only when the argument's static type is
// another concrete type.
func buffered(f *os.File, w io.Writer, bw *bufio.Writer) {
	fw := bufio.NewWriter(f)
	iw := bufio.NewWriterSize(w, 64)
	same := bufio.NewWriter(bw)
	fr := bufio.NewReader(strings.NewReader("x"))
	_, _, _, _ = fw, iw, same, fr
}

type lru struct{ ll *list.List }

type entry struct{ k, v int }

// A fresh result assigned by a statement whose call gets its operands in
// temporaries (a BarrierPair around c.ll.PushFront): k8s.io/utils' forked
// golang-lru, whose new elements went unrecorded.
func pushed(c *lru, k int) *list.Element {
	ele := c.ll.PushFront(&entry{k, 1})
	return ele
}

// A resolved address and its IP, new on every call (freshHand): serf's
// Config.AddrParts.
func resolved(a string) (string, int, error) {
	addr, err := net.ResolveTCPAddr("tcp", a)
	if err != nil {
		return "", 0, err
	}
	return addr.IP.String(), addr.Port, nil
}
