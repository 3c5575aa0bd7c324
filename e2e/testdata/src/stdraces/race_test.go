package stdraces

import (
	"bufio"
	"bytes"
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The argument calls a function: the Builder's write is recorded after it
// (rt.Then), right before the call.
func TestRaceBuilderArgCall(t *testing.T) {
	var b strings.Builder
	c := make(chan bool)
	go func() {
		b.WriteString(strconv.Itoa(1)) // race: argcall
		c <- true
	}()
	b.WriteString("x") // race: argcall
	<-c
}

func TestRaceBuilderWriteWrite(t *testing.T) {
	var b strings.Builder
	c := make(chan bool)
	go func() {
		b.WriteString("a") // race: builderww
		c <- true
	}()
	b.WriteString("b") // race: builderww
	<-c
}

func TestRaceBuilderWriteLen(t *testing.T) {
	var b strings.Builder
	c := make(chan bool)
	go func() {
		b.WriteByte('a') // race: builderlen
		c <- true
	}()
	sink = b.Len() // race: builderlen
	<-c
}

func TestRaceBufferWriteWrite(t *testing.T) {
	b := new(bytes.Buffer)
	c := make(chan bool)
	go func() {
		b.Write([]byte("a")) // race: bufww
		c <- true
	}()
	b.Write([]byte("b")) // race: bufww
	<-c
}

func TestRaceBufferWriteLen(t *testing.T) {
	var b bytes.Buffer
	c := make(chan bool)
	go func() {
		b.WriteString("abc") // race: buflen
		c <- true
	}()
	sink = b.Len() // race: buflen
	<-c
}

func TestRaceBufferResetString(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("abc")
	c := make(chan bool)
	go func() {
		b.Reset() // race: bufreset
		c <- true
	}()
	sink = b.String() // race: bufreset
	<-c
}

// A byte written through the slice Bytes returns, while String copies it.
func TestRaceBufferBytesString(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("abc")
	p := b.Bytes()
	c := make(chan bool)
	go func() {
		copy(p, "x") // race: bufbytes
		c <- true
	}()
	sink = b.String() // race: bufbytes
	<-c
}

func TestRaceBufferWriteArg(t *testing.T) {
	var b bytes.Buffer
	p := []byte("abc")
	c := make(chan bool)
	go func() {
		p[0] = 'x' // race: bufarg
		c <- true
	}()
	b.Write(p) // race: bufarg
	<-c
}

// A byte in the middle of a word of the bytes a Write copies (rt.ElemsWords
// records each byte, as one range event).
func TestRaceBufferWriteArgMiddle(t *testing.T) {
	var b bytes.Buffer
	p := []byte("abc")
	c := make(chan bool)
	go func() {
		p[2] = 'x' // race: bufargmid
		c <- true
	}()
	b.Write(p) // race: bufargmid
	<-c
}

func TestRaceBufioWriter(t *testing.T) {
	w := bufio.NewWriter(io.Discard)
	c := make(chan bool)
	go func() {
		w.WriteString("a") // race: bufio
		c <- true
	}()
	w.WriteString("b") // race: bufio
	<-c
}

func TestRaceBufioFlushBuffered(t *testing.T) {
	w := bufio.NewWriter(io.Discard)
	w.WriteString("abc")
	c := make(chan bool)
	go func() {
		w.Flush() // race: bufioflush
		c <- true
	}()
	sink = w.Buffered() // race: bufioflush
	<-c
}

// Peek's bytes are the Reader's buffer: a write through one Peek's result
// races with a read through another's. racekit records the buffer's
// allocation at the first Peek only (rt.W1Arrays), not at the second, which
// would forget the write.
func TestRacePeekedBytes(t *testing.T) {
	br := bufio.NewReader(strings.NewReader("abcdef"))
	p, _ := br.Peek(2)
	c := make(chan bool)
	go func() {
		p[0] = 'x' // race: peeked
		c <- true
	}()
	q, _ := br.Peek(2)
	sink = q[0] // race: peeked
	<-c
}

func TestRaceFprintfBuilder(t *testing.T) {
	var b strings.Builder
	c := make(chan bool)
	go func() {
		fmt.Fprintf(&b, "%d", 1) // race: fprintf
		c <- true
	}()
	b.WriteString("x") // race: fprintf
	<-c
}

func TestRaceListPushBackLen(t *testing.T) {
	l := list.New()
	c := make(chan bool)
	go func() {
		l.PushBack(1) // race: listlen
		c <- true
	}()
	sink = l.Len() // race: listlen
	<-c
}

func TestRaceListPushFrontBack(t *testing.T) {
	var l list.List
	c := make(chan bool)
	go func() {
		l.PushFront(1) // race: listpush
		c <- true
	}()
	l.PushBack(2) // race: listpush
	<-c
}

func TestRaceBigAddString(t *testing.T) {
	z := big.NewInt(41)
	one := big.NewInt(1)
	c := make(chan bool)
	go func() {
		z.Add(z, one) // race: bigadd
		c <- true
	}()
	sink = z.String() // race: bigadd
	<-c
}

func TestRaceBigSetCmp(t *testing.T) {
	x, y := big.NewInt(1), big.NewInt(2)
	c := make(chan bool)
	go func() {
		x.SetInt64(3) // race: bigcmp
		c <- true
	}()
	sink = y.Cmp(x) // race: bigcmp
	<-c
}

func TestRaceSortSliceRead(t *testing.T) {
	s := []int{3, 1, 2}
	c := make(chan bool)
	go func() {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) // race: sortslice
		c <- true
	}()
	sink = s[2] // race: sortslice
	<-c
}

func TestRaceSortIntsWrite(t *testing.T) {
	s := []int{3, 1, 2}
	c := make(chan bool)
	go func() {
		sort.Ints(s) // race: sortints
		c <- true
	}()
	s[1] = 5 // race: sortints
	<-c
}

func TestRaceSlicesSortWrite(t *testing.T) {
	s := []string{"c", "a", "b"}
	c := make(chan bool)
	go func() {
		slices.Sort(s) // race: slicessort
		c <- true
	}()
	s[0] = "z" // race: slicessort
	<-c
}

// The element the sort moved is written (rt.SortPost, after the call).
func TestRaceSortFuncMovedRead(t *testing.T) {
	s := []int{2, 1, 3}
	c := make(chan bool)
	go func() {
		slices.SortFunc(s, func(a, b int) int { return a - b }) // race: sortmoved
		c <- true
	}()
	sink = s[0] // race: sortmoved
	<-c
}

func TestRaceSlicesContainsWrite(t *testing.T) {
	s := []int{1, 2, 3}
	c := make(chan bool)
	go func() {
		s[2] = 4 // race: contains
		c <- true
	}()
	sink = slices.Contains(s, 4) // race: contains
	<-c
}

func TestRaceBytesEqualWrite(t *testing.T) {
	a, b := []byte("abc"), []byte("abd")
	c := make(chan bool)
	go func() {
		a[2] = 'd' // race: bytesequal
		c <- true
	}()
	sink = bytes.Equal(a, b) // race: bytesequal
	<-c
}

func TestRaceMapsCopyDst(t *testing.T) {
	dst, src := map[string]int{}, map[string]int{"a": 1}
	c := make(chan bool)
	go func() {
		maps.Copy(dst, src) // race: mapscopy
		c <- true
	}()
	apart()
	dst["b"] = 2 // race: mapscopy
	<-c
}

type record struct {
	Name  string
	Count int
}

func TestRaceJSONMarshalField(t *testing.T) {
	v := &record{Name: "a"}
	c := make(chan bool)
	go func() {
		v.Count = 2 // race: jsonfield
		c <- true
	}()
	sink, _ = json.Marshal(v) // race: jsonfield
	<-c
}

func TestRaceJSONMarshalElem(t *testing.T) {
	s := []record{{Name: "a"}, {Name: "b"}}
	c := make(chan bool)
	go func() {
		s[1].Name = "c" // race: jsonelem
		c <- true
	}()
	sink, _ = json.Marshal(s) // race: jsonelem
	<-c
}

func TestRaceJSONEncoder(t *testing.T) {
	v := &record{Name: "a"}
	enc := json.NewEncoder(io.Discard)
	c := make(chan bool)
	go func() {
		v.Name = "b" // race: jsonenc
		c <- true
	}()
	enc.Encode(v) // race: jsonenc
	<-c
}

// A std method promoted through an embedded field.
func TestRaceBufferEmbedded(t *testing.T) {
	var l struct{ bytes.Buffer }
	c := make(chan bool)
	go func() {
		l.WriteString("a") // race: embedded
		c <- true
	}()
	l.WriteString("b") // race: embedded
	<-c
}

// fmt reads the elements it prints.
func TestRaceSprintSlice(t *testing.T) {
	s := []int{1, 2}
	c := make(chan bool)
	go func() {
		s[0] = 3 // race: sprint
		c <- true
	}()
	sink = fmt.Sprint(s) // race: sprint
	<-c
}

// The receiver is a pointer variable which no function literal captures:
// the Builder it points to is shared all the same.
func TestRaceBuilderPointerLocal(t *testing.T) {
	shared := new(strings.Builder)
	q := shared
	c := make(chan bool)
	go func() {
		shared.WriteString("x") // race: ptrlocal
		c <- true
	}()
	q.WriteString("y") // race: ptrlocal
	<-c
}

// A WaitGroup's Done as a method value, called before the write it should
// have followed: Wait orders nothing after it.
func TestRaceMethodValueDoneEarly(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	done := wg.Done
	x := 0
	_ = &x // no read of x after the race: a read would race with the goroutine's write too, a pair -race's one report may not show
	go func() {
		done()
		x = 1 // race: donearly
	}()
	wg.Wait()
	x = 2 // race: donearly
	time.Sleep(time.Millisecond)
}

// A plain write of an atomic.Value races with its Store, which reads the
// Value's type word (atomic side unframed).
func TestRaceValueOverwrite(t *testing.T) {
	h := new(struct{ v atomic.Value })
	h.v.Store(1)
	c := make(chan bool)
	go func() {
		h.v.Store(2) // race: valueover
		c <- true
	}()
	h.v = atomic.Value{} // race: valueover
	<-c
}

type valueBox struct {
	n int
	v atomic.Value
}

// A copy of a struct that holds an atomic.Value reads the Value's data
// word, which Store writes (atomic side unframed).
func TestRaceValueInStructCopy(t *testing.T) {
	b := new(valueBox)
	b.v.Store(1)
	c := make(chan bool)
	go func() {
		b.v.Store(2) // race: valuecopy
		c <- true
	}()
	cp := *b // race: valuecopy
	sink = cp.n
	<-c
}

// Reads do not order each other: the release before a read is for an
// io.Pipe's writer alone (rt's pipeObj), so two goroutines that each read
// from their own reader still race.
func TestRaceReadsUnordered(t *testing.T) {
	var x int
	c := make(chan bool)
	go func() {
		x = 1 // race: readsunordered
		var r io.Reader = strings.NewReader("a")
		r.Read(make([]byte, 1))
		c <- true
	}()
	var r io.Reader = strings.NewReader("b")
	r.Read(make([]byte, 1))
	sink = x // race: readsunordered
	<-c
}

func TestRaceBytesHasPrefixWrite(t *testing.T) {
	s := []byte("abcdefgh")
	c := make(chan bool)
	go func() {
		s[1] = 'x' // race: hasprefix
		c <- true
	}()
	sink = bytes.HasPrefix(s, []byte("ab")) // race: hasprefix
	<-c
}

func TestRaceBytesHasSuffixWrite(t *testing.T) {
	s := []byte("abcdefgh")
	c := make(chan bool)
	go func() {
		s[7] = 'x' // race: hassuffix
		c <- true
	}()
	sink = bytes.HasSuffix(s, []byte("gh")) // race: hassuffix
	<-c
}

// HasPrefix compares the first len(prefix) bytes, HasSuffix the last:
// a write of a byte past them does not race (go test -race sees the
// comparison's reads only).
func TestNoRaceBytesHasPrefixTail(t *testing.T) {
	s := []byte("abcdefgh")
	prefix, suffix := []byte("ab"), []byte("gh")
	c := make(chan bool)
	go func() {
		s[4] = 'x'
		c <- true
	}()
	sink = bytes.HasPrefix(s, prefix)
	sink = bytes.HasSuffix(s, suffix)
	<-c
}
