package stdraces

import (
	"bytes"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Accesses through package reflect (rt/reflect.go), buffers that Read fills
// and Write reads (instrument/stdcalls.go's ioBufEffect) and the channel
// read of a select's send case. (The WaitGroup annotations of rt/wgmisuse.go
// are checked by rt's TestWaitGroupMisuse and Go's race suite: the Go race
// detector's report of them has no frame in the test.)

func TestRaceReflectSetIntRead(t *testing.T) {
	x := 0
	v := reflect.ValueOf(&x).Elem()
	c := make(chan bool)
	go func() {
		v.SetInt(1) // race: reflectset
		c <- true
	}()
	sink = x // race: reflectset
	<-c
}

func TestRaceReflectIntWrite(t *testing.T) {
	x := 0
	v := reflect.ValueOf(&x).Elem()
	c := make(chan bool)
	go func() {
		x = 2 // race: reflectint
		c <- true
	}()
	sink = v.Int() // race: reflectint
	<-c
}

func TestRaceReflectFieldSetString(t *testing.T) {
	type rec struct{ Name string }
	r := &rec{}
	c := make(chan bool)
	go func() {
		reflect.ValueOf(r).Elem().Field(0).SetString("a") // race: reflectfield
		c <- true
	}()
	sink = r.Name // race: reflectfield
	<-c
}

func TestRaceReflectCopyRead(t *testing.T) {
	src := []int{1, 2, 3}
	dst := make([]int, 3)
	c := make(chan bool)
	go func() {
		reflect.Copy(reflect.ValueOf(dst), reflect.ValueOf(src)) // race: reflectcopy
		c <- true
	}()
	src[1] = 5 // race: reflectcopy
	<-c
}

// reflect.Append writes the element it appends into the array's spare
// capacity, which another goroutine reads.
func TestRaceReflectAppendSpare(t *testing.T) {
	s := make([]int, 1, 4)
	c := make(chan bool)
	go func() {
		sink = s[:2][1] // race: reflectappend
		c <- true
	}()
	reflect.Append(reflect.ValueOf(s), reflect.ValueOf(5)) // race: reflectappend
	<-c
}

// reflect.AppendSlice reads the slice it appends, which another goroutine
// writes.
func TestRaceReflectAppendSliceRead(t *testing.T) {
	src := []int{1, 2}
	c := make(chan bool)
	go func() {
		src[0] = 3 // race: reflectappendslice
		c <- true
	}()
	reflect.AppendSlice(reflect.ValueOf([]int{0}), reflect.ValueOf(src)) // race: reflectappendslice
	<-c
}

func TestRaceReflectMapIndex(t *testing.T) {
	m := map[string]int{"a": 1}
	v := reflect.ValueOf(m)
	c := make(chan bool)
	go func() {
		m["b"] = 2 // race: reflectmap
		c <- true
	}()
	apart()
	sink = v.MapIndex(reflect.ValueOf("a")) // race: reflectmap
	<-c
}

func TestRaceReaderReadBuffer(t *testing.T) {
	buf := make([]byte, 8)
	c := make(chan bool)
	go func() {
		r := strings.NewReader("abcdefgh")
		r.Read(buf) // race: readbuf
		c <- true
	}()
	sink = buf[0] // race: readbuf
	<-c
}

func TestRaceReadFullBuffer(t *testing.T) {
	buf := make([]byte, 8)
	c := make(chan bool)
	go func() {
		io.ReadFull(bytes.NewReader([]byte("abcdefgh")), buf) // race: readfull
		c <- true
	}()
	buf[0] = 'x' // race: readfull
	<-c
}

func TestRaceFileReadBuffer(t *testing.T) {
	buf := make([]byte, 16)
	c := make(chan bool)
	go func() {
		f, err := os.Open("reflectio_test.go")
		if err == nil {
			f.Read(buf) // race: fileread
			f.Close()
		}
		c <- true
	}()
	sink = buf[0] // race: fileread
	<-c
}

// The sleep (no edge) lets the write come first: fnv's eight byte reads of
// one word, when they come first, can push the read of byte 0 out of the
// four accesses -race keeps per word (it then reported nothing: 2 runs of
// 12 before the sleep, 0 of 12 after).
func TestRaceHashWriteBuffer(t *testing.T) {
	buf := []byte("abcdefgh")
	var h hash.Hash64 = fnv.New64a()
	c := make(chan bool)
	go func() {
		time.Sleep(10 * time.Millisecond)
		h.Write(buf) // race: hashwrite
		c <- true
	}()
	buf[0] = 'x' // race: hashwrite
	<-c
}

// A select whose send case panics on a channel another goroutine closed.
func TestRaceSelectSendClose(t *testing.T) {
	ch := make(chan int, 1)
	other := make(chan int)
	done := make(chan bool, 2)
	go func() {
		defer func() {
			recover()
			done <- true
		}()
		time.Sleep(10 * time.Millisecond)
		select {
		case ch <- 1: // race: selclose
		case <-other:
		}
	}()
	go func() {
		close(ch) // race: selclose
		done <- true
	}()
	<-done
	<-done
}

func TestNoRaceReflectHandoff(t *testing.T) {
	x := 0
	v := reflect.ValueOf(&x).Elem()
	c := make(chan bool)
	go func() {
		v.SetInt(1)
		c <- true
	}()
	<-c
	sink = v.Int()
	sink = x
}

func TestNoRaceReflectValueCopy(t *testing.T) {
	type pair struct{ A, B int }
	p := pair{1, 2}
	v := reflect.ValueOf(p) // a copy: not addressable
	c := make(chan bool)
	go func() {
		sink = v.Field(0).Int()
		c <- true
	}()
	p.A = 3
	<-c
	sink = p
}

func TestNoRaceReadHandoff(t *testing.T) {
	in := make(chan []byte)
	ack := make(chan bool)
	go func() {
		r := strings.NewReader("abcdefghijklmnopqrstuvwxyz")
		buf := make([]byte, 4)
		for {
			n, err := r.Read(buf)
			if err != nil {
				break
			}
			in <- buf[:n]
			<-ack // the consumer is done with buf
		}
		close(in)
	}()
	var all []byte
	for b := range in {
		all = append(all, b...)
		ack <- true
	}
	sink = all
}

func TestNoRaceReadOwnBuffers(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			f, err := os.Open("reflectio_test.go")
			if err != nil {
				return
			}
			defer f.Close()
			io.ReadFull(f, buf)
			_ = buf[0]
		}()
	}
	wg.Wait()
}

func TestNoRaceWaitGroupReuse(t *testing.T) {
	var wg sync.WaitGroup
	data := make([]int, 3)
	for round := 0; round < 3; round++ {
		wg.Add(len(data))
		for i := range data {
			go func() {
				data[i]++
				wg.Done()
			}()
		}
		wg.Wait()
	}
	sink = data
}

func TestNoRaceWaitGroupTwoWaiters(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	c := make(chan bool)
	for i := 0; i < 2; i++ {
		go func() {
			wg.Wait()
			c <- true
		}()
	}
	time.Sleep(10 * time.Millisecond)
	wg.Done()
	<-c
	<-c
}

func TestNoRaceSelectSendOrdered(t *testing.T) {
	ch := make(chan int, 1)
	other := make(chan int)
	sent := make(chan bool)
	go func() {
		select {
		case ch <- 1:
		case <-other:
		}
		sent <- true
	}()
	<-sent
	close(ch)
}

func TestNoRaceBufferEmbeddedLocked(t *testing.T) {
	var l struct {
		sync.Mutex
		bytes.Buffer
	}
	c := make(chan bool)
	go func() {
		l.Lock()
		l.WriteString("a")
		l.Unlock()
		c <- true
	}()
	l.Lock()
	l.WriteString("b")
	l.Unlock()
	<-c
}

func TestRaceSprintfStructField(t *testing.T) {
	type point struct{ X, Y int }
	p := &point{1, 2}
	c := make(chan bool)
	go func() {
		p.Y = 3 // race: sprintfield
		c <- true
	}()
	sink = fmt.Sprintf("at %v", p) // race: sprintfield
	<-c
}

func TestRaceErrorfSlice(t *testing.T) {
	ids := []string{"a", "b"}
	c := make(chan bool)
	go func() {
		ids[1] = "c" // race: errorf
		c <- true
	}()
	sink = fmt.Errorf("missing %q", ids) // race: errorf
	<-c
}

// String is called (traced code, under its lock): the fields are not
// read by fmt.
type lockedCounter struct {
	mu sync.Mutex
	n  int
}

func (l *lockedCounter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.n)
}

func TestNoRaceSprintStringer(t *testing.T) {
	l := &lockedCounter{}
	c := make(chan bool)
	go func() {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
		c <- true
	}()
	sink = fmt.Sprint(l)
	<-c
}

func TestNoRaceSprintfTypeAndPointer(t *testing.T) {
	s := []int{1, 2}
	c := make(chan bool)
	go func() {
		s[0] = 3
		c <- true
	}()
	sink = fmt.Sprintf("%T %p", s, s)
	<-c
}

func TestNoRaceSprintNestedPointer(t *testing.T) {
	type node struct {
		V    int
		Next *node
	}
	n := &node{V: 1, Next: &node{V: 2}}
	c := make(chan bool)
	go func() {
		n.Next.V = 3 // fmt prints the nested pointer as an address
		c <- true
	}()
	sink = fmt.Sprint(n)
	<-c
}

// A byte through a pipe orders the writer's store before the reader's load
// (the edge of a write and a read system call, which -race draws too), also
// when the read is an if's init statement, after which no statement can go.
func TestNoRacePipeReadInit(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	shared := new(int)
	go func() {
		*shared = 1
		w.Write([]byte{1})
	}()
	b := make([]byte, 1)
	if n, err := r.Read(b); err == nil && n == 1 {
		sink = *shared
	}
}

// A write after a send through reflect is not ordered with the receiver's
// read after its receive.
func TestRaceReflectSendAfter(t *testing.T) {
	c := make(chan int, 1)
	var x int
	done := make(chan bool)
	go func() {
		reflect.ValueOf(c).Send(reflect.ValueOf(1))
		x = 1 // race: reflectsend
		done <- true
	}()
	reflect.ValueOf(c).Recv()
	sink = x // race: reflectsend
	<-done
}
