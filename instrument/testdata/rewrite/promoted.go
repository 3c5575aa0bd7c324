package p

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// Std methods promoted through embedded fields (the receiver keeps its
// type: a BarrierPair follows the fields from it too), reflect's hooks,
// fmt's reads, a Read's buffer and the WaitGroup hooks.

type scanner struct {
	*bufio.Scanner
	unscanned bool
}

func (s *scanner) Scan() bool { return s.Scanner.Scan() }

type parser struct{ scan *scanner }

func parse(r io.Reader) []string {
	p := &parser{scan: &scanner{Scanner: bufio.NewScanner(r)}}
	var out []string
	for p.scan.Scan() {
		out = append(out, p.scan.Text())
	}
	return out
}

type buf struct{ bytes.Buffer }

func write(b *buf) { b.WriteString("x") }

func local() string {
	var l struct{ strings.Builder }
	go func() { l.WriteString("y") }()
	return l.String()
}

func reflects(x *int, s []int) int64 {
	v := reflect.ValueOf(x).Elem()
	v.SetInt(3)
	reflect.Copy(reflect.ValueOf(s), reflect.ValueOf(s[1:]))
	xs := []reflect.Value{v}
	a := reflect.Append(reflect.ValueOf(s), xs...)
	a = reflect.AppendSlice(reflect.Append(a, v, v), reflect.ValueOf(s))
	go reflect.Append(a, v)
	f := reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value { return args })
	_ = f.Call(xs)[0]
	return v.Int()
}

func prints(s []int, p *buf) string {
	return fmt.Sprintf("%v %d", s, len(s)) + fmt.Sprint(p) + fmt.Sprintf("%T", s)
}

func reads(r io.Reader, b []byte) (int, error) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.Read(b) }()
	wg.Wait()
	return r.Read(b)
}
