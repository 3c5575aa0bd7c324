package stdraces

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/rpc"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNoRaceSyncMap(t *testing.T) {
	var m sync.Map
	c := make(chan bool)
	go func() {
		m.Store("a", 1)
		c <- true
	}()
	m.Store("a", 2)
	sink, _ = m.Load("a")
	<-c
}

func TestNoRacePool(t *testing.T) {
	p := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	c := make(chan bool)
	go func() {
		b := p.Get().(*bytes.Buffer)
		b.WriteString("a")
		p.Put(b)
		c <- true
	}()
	b := p.Get().(*bytes.Buffer)
	b.WriteString("b")
	p.Put(b)
	<-c
}

func TestNoRaceLogger(t *testing.T) {
	l := log.New(io.Discard, "", 0)
	c := make(chan bool)
	go func() {
		l.Printf("a %d", 1)
		c <- true
	}()
	l.Printf("b %d", 2)
	<-c
}

// gatedWriter appends each line under a read lock: two Writes at once
// would race, and a log.Logger never makes them (hashicorp/serf's
// GatedWriter, which Logger's own mutex keeps safe).
type gatedWriter struct {
	mu    sync.RWMutex
	lines [][]byte
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	w.lines = append(w.lines, append([]byte(nil), p...))
	return len(p), nil
}

// A Logger calls its writer's Write holding its own mutex: the writer of
// the program's is ordered by it.
func TestNoRaceLoggerCallsWriterLocked(t *testing.T) {
	w := &gatedWriter{}
	l := log.New(w, "", 0)
	c := make(chan bool)
	go func() {
		l.Printf("a %d", 1)
		c <- true
	}()
	l.Println("b")
	<-c
}

// The same through the package-level functions of the standard logger.
func TestNoRaceStdLoggerCallsWriterLocked(t *testing.T) {
	w := &gatedWriter{}
	defer log.SetOutput(log.Writer())
	log.SetOutput(w)
	c := make(chan bool)
	go func() {
		log.Printf("a %d", 1)
		c <- true
	}()
	log.Print("b")
	<-c
}

// appLogger embeds a Logger: its Printf is the Logger's.
type appLogger struct {
	*log.Logger
	name string
}

// The same through a method promoted from an embedded Logger.
func TestNoRaceEmbeddedLoggerCallsWriterLocked(t *testing.T) {
	w := &gatedWriter{}
	l := appLogger{Logger: log.New(w, "", 0), name: "app"}
	c := make(chan bool)
	go func() {
		l.Printf("a %d", 1)
		c <- true
	}()
	l.Println("b")
	<-c
}

// slog's TextHandler and JSONHandler call their writer holding a mutex
// the handlers With derives from them share.
func TestNoRaceSlogHandlerCallsWriterLocked(t *testing.T) {
	w := &gatedWriter{}
	l := slog.New(slog.NewTextHandler(w, nil))
	c := make(chan bool)
	go func() {
		l.With("g", 1).Info("a")
		c <- true
	}()
	l.Warn("b", "n", 2)
	<-c
}

// The same through the package-level functions of the default Logger.
func TestNoRaceSlogDefaultCallsWriterLocked(t *testing.T) {
	w := &gatedWriter{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewJSONHandler(w, nil)))
	c := make(chan bool)
	go func() {
		slog.Info("a", "n", 1)
		c <- true
	}()
	slog.Error("b")
	<-c
}

func TestNoRaceAtomicValue(t *testing.T) {
	var v atomic.Value
	c := make(chan bool)
	go func() {
		v.Store([]int{1})
		c <- true
	}()
	sink = v.Load()
	<-c
}

func TestNoRaceOnceValue(t *testing.T) {
	f := sync.OnceValue(func() *strings.Builder {
		var b strings.Builder
		b.WriteString("once")
		return &b
	})
	c := make(chan bool)
	go func() {
		n := f().Len()
		_ = n
		c <- true
	}()
	sink = f().String()
	<-c
}

func TestNoRaceBufferMutex(t *testing.T) {
	var mu sync.Mutex
	var b bytes.Buffer
	c := make(chan bool)
	go func() {
		mu.Lock()
		b.WriteString("a")
		mu.Unlock()
		c <- true
	}()
	mu.Lock()
	b.WriteString("b")
	sink = b.Len()
	mu.Unlock()
	<-c
}

func TestNoRaceJSONMarshalShared(t *testing.T) {
	v := &record{Name: "a", Count: 1}
	c := make(chan bool)
	go func() {
		sink, _ = json.Marshal(v)
		c <- true
	}()
	_, _ = json.Marshal(v)
	<-c
}

// json reads exported fields only: an unexported one may be written
// meanwhile.
type withHidden struct {
	Name string
	hits int
}

func TestNoRaceJSONUnexported(t *testing.T) {
	v := &withHidden{Name: "a"}
	c := make(chan bool)
	go func() {
		v.hits++
		c <- true
	}()
	sink, _ = json.Marshal(v)
	<-c
}

// json calls MarshalJSON instead of reading the fields; it locks.
type locked struct {
	mu sync.Mutex
	N  int
}

func (l *locked) MarshalJSON() ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return json.Marshal(l.N)
}

func TestNoRaceJSONMarshaler(t *testing.T) {
	v := &locked{}
	c := make(chan bool)
	go func() {
		v.mu.Lock()
		v.N++
		v.mu.Unlock()
		c <- true
	}()
	sink, _ = json.Marshal(v)
	<-c
}

func TestNoRaceFileWrites(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := make(chan bool)
	go func() {
		f.Write([]byte("a"))
		c <- true
	}()
	f.WriteString("b")
	<-c
}

func TestNoRaceBuilderPerGoroutine(t *testing.T) {
	c := make(chan string)
	for i := 0; i < 2; i++ {
		go func() {
			var b strings.Builder
			b.WriteString("x")
			c <- b.String()
		}()
	}
	sink = <-c + <-c
}

func TestNoRaceListHandoff(t *testing.T) {
	l := list.New()
	c := make(chan bool)
	go func() {
		l.PushBack(1)
		c <- true
	}()
	<-c
	sink = l.Len()
}

func TestNoRaceSortThenRead(t *testing.T) {
	s := []int{3, 1, 2}
	c := make(chan bool)
	go func() {
		sort.Ints(s)
		c <- true
	}()
	<-c
	sink = s[0]
}

// A sort of a slice already in order only reads it (go test -race sees no
// write; go-co-op/gocron sorts its sorted list of next runs while a caller
// reads its first): a read of it meanwhile is no race.
func TestNoRaceSortSortedRead(t *testing.T) {
	s := []int{1, 2, 3}
	c := make(chan bool)
	go func() {
		sort.Ints(s)
		c <- true
	}()
	sink = s[0]
	<-c
}

// An element the sort leaves where it was is not written: the insertion
// sort of three swaps the first two only.
func TestNoRaceSortFuncUnmovedRead(t *testing.T) {
	s := []int{2, 1, 3}
	c := make(chan bool)
	go func() {
		slices.SortFunc(s, func(a, b int) int { return a - b })
		c <- true
	}()
	sink = s[2]
	<-c
}

func TestNoRaceReadOnlyShared(t *testing.T) {
	s := []int{1, 2, 3}
	x := big.NewInt(7)
	c := make(chan bool)
	go func() {
		ok := slices.Contains(s, 2)
		str := x.String()
		_, _ = ok, str
		c <- true
	}()
	sink = slices.Index(s, 3)
	sink = x.Cmp(big.NewInt(8))
	<-c
}

func TestNoRaceWaitGroup(t *testing.T) {
	var b bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.WriteString("a")
	}()
	wg.Wait()
	sink = b.String()
}

// The write of b is recorded after the receive its argument makes, which
// orders it after the other goroutine's write.
func TestNoRaceBuilderArgReceive(t *testing.T) {
	var b strings.Builder
	c := make(chan string)
	go func() {
		b.WriteString("a")
		c <- "b"
	}()
	b.WriteString(<-c)
}

// Element.Next reads the links, not Value.
func TestNoRaceListElementValue(t *testing.T) {
	l := list.New()
	e := l.PushBack(1)
	l.PushBack(2)
	c := make(chan bool)
	go func() {
		e.Value = 3
		c <- true
	}()
	sink = e.Next()
	<-c
}

// A context of the user's type as the parent of a standard one: package
// context starts a goroutine that waits on parent.Done() (untraced) and
// then calls parent.Err(), after cancel wrote err and closed done.
type userCtx struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
}

func (c *userCtx) Deadline() (time.Time, bool)       { return time.Time{}, false }
func (c *userCtx) Done() <-chan struct{}             { return c.done }
func (c *userCtx) Err() error                        { return c.err }
func (c *userCtx) Value(key interface{}) interface{} { return nil }

func (c *userCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	close(c.done)
}

func TestNoRaceContextUserParent(t *testing.T) {
	parent := &userCtx{done: make(chan struct{})}
	child, stop := context.WithCancel(parent)
	defer stop()
	time.Sleep(10 * time.Millisecond) // the propagation goroutine waits on parent.Done()
	parent.cancel(context.Canceled)
	<-child.Done()
	if child.Err() == nil {
		t.Fatal("child not canceled")
	}
}

// A Cond whose L is an RWMutex's RLocker: c.L.Lock is RLock, and the
// writer's Lock waits for the reader's Wait to unlock it. The reader's
// first read of ready (before any Wait) comes before the writer's store.
func TestNoRaceCondRLocker(t *testing.T) {
	var rw sync.RWMutex
	c := sync.NewCond(rw.RLocker())
	ready, data := false, 0
	done := make(chan bool)
	go func() {
		c.L.Lock()
		for !ready {
			c.Wait()
		}
		sink = data
		c.L.Unlock()
		done <- true
	}()
	time.Sleep(10 * time.Millisecond) // the reader reads ready first
	rw.Lock()
	data, ready = 1, true
	rw.Unlock()
	c.Broadcast()
	<-done
}

// A WaitGroup's Done handed on as a func() and called by the standard
// library's timer goroutine (miekg/dns's server calls its
// NotifyStartedFunc, wg.Done, so): the write before it is ordered before
// Wait's return.
func TestNoRaceMethodValueDone(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	done := wg.Done
	x := 0
	time.AfterFunc(time.Millisecond, func() {
		x = 1
		done()
	})
	wg.Wait()
	sink = x
}

// A Mutex's Unlock as a method value, called by another goroutine: it
// unlocks as a call would.
func TestNoRaceMethodValueUnlock(t *testing.T) {
	var mu sync.Mutex
	unlock := mu.Unlock
	x := 0
	mu.Lock()
	go func() {
		x = 1
		unlock()
	}()
	mu.Lock()
	sink = x
	mu.Unlock()
}

// A copy of an atomic.Value alone reads its type word only (go test -race
// instruments it as its one field), which a Store after the first does not
// write.
func TestNoRaceValueCopy(t *testing.T) {
	var v atomic.Value
	v.Store(1)
	c := make(chan bool)
	go func() {
		v.Store(2)
		c <- true
	}()
	w := v
	sink = w.Load()
	<-c
}

// fillReader writes its buffer through: a traced Read that io.Copy calls.
type fillReader struct{ n int }

func (r *fillReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	r.n--
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// io.Copy to io.Discard reads through an 8 KiB buffer of a sync.Pool inside
// package io: the goroutine that gets it after another put it back is
// ordered after that one by the pool (go test -race's Put and Get edges),
// though by nothing the program does (fasthttp's fasthttputil tests).
func TestNoRaceDiscardPooledBuffer(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: the second Get takes the first Put
	first := func() { io.Copy(io.Discard, &fillReader{n: 2}) }
	go first()
	time.Sleep(20 * time.Millisecond) // no edge: the second goroutine is not ordered after the first
	done := make(chan bool)
	go func() {
		io.Copy(io.Discard, &fillReader{n: 2})
		done <- true
	}()
	<-done
}

// And back: the first goroutine, which gets the buffer again after the
// second put it back, is ordered after that Put (x/net's websocket
// TestCtrlAndData: the client's and the server's discarded pings).
func TestNoRaceDiscardPooledBufferBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: each Get takes the last Put
	done := make(chan bool)
	go func() {
		io.Copy(io.Discard, &fillReader{n: 2})
		time.Sleep(40 * time.Millisecond) // no edge with the second goroutine
		io.Copy(io.Discard, &fillReader{n: 2})
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	go func() {
		io.Copy(io.Discard, &fillReader{n: 2})
	}()
	<-done
}

// A send in a select that a goto jumps back to (fasthttp's pipeline
// writer, `againChR: select { case chR <- w: ... }`) orders the write
// before it with the receiver's read.
func TestNoRaceGotoSelectHandoff(t *testing.T) {
	type work struct{ n int }
	ch := make(chan *work, 1)
	done := make(chan int)
	go func() {
		w := <-ch
		done <- w.n
	}()
	w := &work{}
	w.n = 1
	tries := 0
again:
	select {
	case ch <- w:
	default:
		tries++
		if tries < 3 {
			goto again
		}
	}
	sink = <-done
}

// The same handoff in a select that a goto jumps back to and a break
// names: its operations are recorded as well.
func TestNoRaceGotoBreakSelectHandoff(t *testing.T) {
	type work struct{ n int }
	ch := make(chan *work)
	done := make(chan int)
	go func() {
		w := <-ch
		done <- w.n
	}()
	w := &work{}
	w.n = 1
	sent := false
again:
	select {
	case ch <- w:
		sent = true
		break again
	case <-time.After(time.Millisecond):
	}
	if !sent {
		goto again
	}
	sink = <-done
}

// A range over a channel that a goto jumps back to: each receive orders
// the sender's write before the reader's read (instrument's rangeChan
// keeps the loop out of a block for the goto).
func TestNoRaceGotoRangeHandoff(t *testing.T) {
	type work struct{ n int }
	ch := make(chan *work)
	items := make([]work, 3) // allocated before: no allocation between the two sides
	go func() {
		for i := range items {
			items[i].n = i
			ch <- &items[i]
		}
		close(ch)
	}()
	sum, rounds := 0, 0
again:
	for w := range ch {
		sum += w.n
		w.n = -1
	}
	if rounds++; rounds < 2 {
		goto again
	}
	sink = sum
}

// A range over an array with no value variable does not evaluate the
// array (its length is a constant): it reads nothing, so it does not race
// with writes of the elements (coocood/freecache sums a field of each
// segment with atomic loads while Clear resets the segments under their
// locks).
func TestNoRaceRangeArrayIndexOnly(t *testing.T) {
	type segment struct{ begin, end, hits int64 }
	var segs [4]segment
	var locks [4]sync.Mutex
	done := make(chan bool)
	go func() {
		for i := range segs {
			locks[i].Lock()
			segs[i].begin, segs[i].end = 0, 0
			locks[i].Unlock()
		}
		done <- true
	}()
	var hits int64
	for i := range segs {
		hits += atomic.LoadInt64(&segs[i].hits)
	}
	<-done
	sink = hits
}

// A pipe's close is seen by its reader's Read returning io.EOF (io.Pipe
// closes a channel): what the writer did before closing is ordered before
// what the reader does after (fasthttp's fasthttpadaptor: the handler's
// goroutine sets the trailers and closes the body pipe, the server's
// reads them once the pipe says EOF).
func TestNoRacePipeCloseEOF(t *testing.T) {
	pr, pw := io.Pipe()
	var trailer string
	go func() {
		trailer = "done"
		pw.Close()
	}()
	buf := make([]byte, 8)
	for {
		if _, err := pr.Read(buf); err == io.EOF {
			break
		}
	}
	if trailer != "done" {
		t.Fatal(trailer)
	}
}

// A pipe reader's close is seen by the writer's Write returning
// io.ErrClosedPipe (io.Pipe closes a channel): what the reader did before
// closing is ordered before what the writer does after.
func TestNoRacePipeReaderCloseWrite(t *testing.T) {
	pr, pw := io.Pipe()
	var reason string
	done := make(chan string)
	go func() {
		for {
			if _, err := pw.Write([]byte("x")); err == io.ErrClosedPipe {
				done <- reason
				return
			}
		}
	}()
	buf := make([]byte, 1)
	pr.Read(buf)
	reason = "enough"
	pr.Close()
	if r := <-done; r != "enough" {
		t.Fatal(r)
	}
}

// A bytes.Buffer's WriteTo writes to the connection it is given, and the
// reader of a net.Pipe sees what came before (net.Pipe's channels): the
// writer's earlier write is ordered before the reader's read after the
// data arrived (mochi-mqtt's client writes packets with WriteTo).
func TestNoRaceBufferWriteToPipe(t *testing.T) {
	r, w := net.Pipe()
	var packetID int
	go func() {
		packetID = 7
		var buf bytes.Buffer
		buf.WriteString("pk")
		buf.WriteTo(w)
	}()
	b := make([]byte, 2)
	io.ReadFull(r, b)
	if packetID != 7 || string(b) != "pk" {
		t.Fatal(packetID, string(b))
	}
}

// ReadFrom reads from the reader it is given: what the pipe's writer did
// before writing is ordered before what follows the ReadFrom.
func TestNoRaceBufferReadFromPipe(t *testing.T) {
	r, w := net.Pipe()
	var packetID int
	go func() {
		packetID = 7
		w.Write([]byte("pk"))
		w.Close()
	}()
	var buf bytes.Buffer
	buf.ReadFrom(r)
	if packetID != 7 || buf.String() != "pk" {
		t.Fatal(packetID, buf.String())
	}
}

// A pulled sequence runs in a coroutine, a goroutine of the runtime's, only
// while its caller waits in next: what it reads under its caller's lock is
// ordered before a later holder's write (maypok86/otter's eviction merges
// two lists' Backward sequences with iter.Pull under its lock).
func TestNoRaceIterPull(t *testing.T) {
	var mu sync.Mutex
	data := []int{1, 2, 3}
	seq := func(yield func(int) bool) {
		for i := range data {
			if !yield(data[i]) {
				return
			}
		}
	}
	mu.Lock()
	next, stop := iter.Pull(seq)
	sum := 0
	for {
		v, ok := next()
		if !ok {
			break
		}
		sum += v
	}
	stop()
	mu.Unlock()
	c := make(chan bool)
	go func() {
		mu.Lock()
		data[0] = sum
		mu.Unlock()
		c <- true
	}()
	<-c
}

// The same with iter.Pull2, stopped early: the coroutine's last read comes
// before stop returns.
func TestNoRaceIterPull2Stop(t *testing.T) {
	m := []string{"a", "b", "c"}
	seq := func(yield func(int, string) bool) {
		for i := range m {
			if !yield(i, m[i]) {
				return
			}
		}
	}
	next, stop := iter.Pull2(seq)
	_, v, _ := next()
	stop()
	c := make(chan bool)
	go func() {
		m[1] = v
		c <- true
	}()
	<-c
}

// slog's first default Logger writes through log's standard Logger, under
// its mutex: a writer set with log.SetOutput is ordered by it.
func TestNoRaceSlogStdLogCallsWriterLocked(t *testing.T) {
	w := &gatedWriter{}
	defer log.SetOutput(log.Writer())
	log.SetOutput(w)
	c := make(chan bool)
	go func() {
		slog.Info("a", "n", 1)
		c <- true
	}()
	slog.Warn("b")
	<-c
}

// A channel received through reflect.Select orders what its sender wrote
// before the send (eapache/channels' SharedBuffer hands its channels to a
// loop on reflect.Select).
func TestNoRaceReflectSelect(t *testing.T) {
	c := make(chan *int)
	go func() {
		x := new(int)
		*x = 1
		c <- x
	}()
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)}}
	_, v, _ := reflect.Select(cases)
	sink = *v.Interface().(*int)
}

// reflect's Send and Recv order as the statements do.
func TestNoRaceReflectSendRecv(t *testing.T) {
	c := make(chan int, 1)
	var x int
	go func() {
		x = 1
		reflect.ValueOf(c).Send(reflect.ValueOf(1))
	}()
	reflect.ValueOf(c).Recv()
	sink = x
}

// reflect's Close is seen by TryRecv, which then returns a valid zero
// value: the close orders what came before it.
func TestNoRaceReflectCloseTryRecv(t *testing.T) {
	c := make(chan int)
	var x int
	go func() {
		x = 1
		reflect.ValueOf(c).Close()
	}()
	for {
		if v, _ := reflect.ValueOf(c).TryRecv(); v.IsValid() {
			break
		}
		runtime.Gosched()
	}
	sink = x
}

// A listener's close is seen by the Accept it makes return an error (the
// descriptor's lock, internal/poll's fdMutex, is atomics the Go race
// detector sees): what the closer did before the close is ordered before
// what the accepting goroutine does after (sourcegraph/jsonrpc2's tests:
// the serving goroutine's `err = serve(...)` after the test's `conn, err :=
// net.Dial(...)` and `lis.Close()`).
func TestNoRaceListenerCloseAccept(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	var state string
	done := make(chan bool)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				break
			}
			c.Close()
		}
		done <- state == "closed"
	}()
	time.Sleep(10 * time.Millisecond) // let Accept block
	state = "closed"
	lis.Close()
	if !<-done {
		t.Fatal("state")
	}
}

// A connection's close is seen by a Read blocked on it, which returns an
// error: what the closer did before is ordered before what the reader does
// after.
func TestNoRaceConnCloseRead(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	var reason string
	done := make(chan string)
	go func() {
		buf := make([]byte, 1)
		for {
			if _, err := a.Read(buf); err != nil {
				done <- reason
				return
			}
		}
	}()
	time.Sleep(10 * time.Millisecond) // let Read block
	reason = "closed"
	a.Close()
	if r := <-done; r != "closed" {
		t.Fatal(r)
	}
}

// An if statement's init assigns a call's result to a shared variable after
// the call returns, here after what the call waited for (sourcegraph/
// jsonrpc2's tests: `if err = serve(ctx, lis, ...); err != nil` in a
// goroutine, while the test's `conn, err := net.Dial(...)` comes before
// the lis.Close that makes serve return).
func TestNoRaceIfInitAssignAfterCall(t *testing.T) {
	var err error
	release := make(chan struct{})
	done := make(chan struct{})
	wait := func() error {
		<-release
		return io.EOF
	}
	go func() {
		if err = wait(); err != nil {
			close(done)
			return
		}
		close(done)
	}()
	time.Sleep(10 * time.Millisecond) // let wait block
	_, err = 0, io.ErrUnexpectedEOF
	close(release)
	<-done
	if err != io.EOF {
		t.Fatal(err)
	}
}

// A RoundTrip sends a request and returns once the response's header has
// been read: what the handler did before it returned (net/http writes the
// response after) is ordered before what the caller does after RoundTrip,
// by the connection's I/O (prometheus/common's headers round tripper tests
// call a Transport's RoundTrip and read what the handler stored: held-out
// batch BM).
func TestNoRaceRoundTripAfterHandler(t *testing.T) {
	var received string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received = r.Header.Get("X-Test")
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	var rt http.RoundTripper = tr
	for i := range 3 {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Test", "v")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if received != "v" {
			t.Fatalf("request %d: received %q", i, received)
		}
	}
}

// RPCCounter is a net/rpc service: its method runs in a goroutine net/rpc
// starts, and writes what the client reads after Call returns.
type RPCCounter struct{ last int }

func (c *RPCCounter) Set(n int, reply *int) error {
	c.last = n
	*reply = n
	return nil
}

// A net/rpc Call writes its request and returns after reading the reply,
// which the server writes after the method returns.
func TestNoRaceRPCCallAfterMethod(t *testing.T) {
	srv := rpc.NewServer()
	svc := &RPCCounter{}
	if err := srv.Register(svc); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	go srv.ServeConn(a)
	client := rpc.NewClient(b)
	defer client.Close()
	for i := range 3 {
		var reply int
		if err := client.Call("RPCCounter.Set", i+1, &reply); err != nil {
			t.Fatal(err)
		}
		if svc.last != i+1 {
			t.Fatalf("call %d: last %d", i, svc.last)
		}
	}
}

// wrappedConn is a connection whose Read passes its reader's results back:
// the usual shape of a buffering or counting wrapper (IBM/sarama's
// bufConn, whose caller is `return io.ReadFull(b.conn, buf)`).
type wrappedConn struct {
	net.Conn
	reads int
}

func (c *wrappedConn) Read(b []byte) (int, error) {
	c.reads++
	return c.Conn.Read(b)
}

func readMessage(c io.Reader, b []byte) (int, error) {
	return io.ReadFull(c, b)
}

// A read returned straight from a function (`return r.Read(b)`) still
// orders what the writer did before writing before what its caller does
// after (held-out batch BM: IBM/sarama's mock broker's history, read by
// the test after the producer's response).
func TestNoRaceReadReturnedFromWrapper(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var history []string
	go func() {
		history = append(history, "request")
		a.Write([]byte("resp"))
	}()
	buf := make([]byte, 4)
	if _, err := readMessage(&wrappedConn{Conn: b}, buf); err != nil {
		t.Fatal(err)
	}
	if len(history) != 1 {
		t.Fatal(history)
	}
}

// printfLogger is a library's logger interface (IBM/sarama's StdLogger),
// here holding a *log.Logger.
type printfLogger interface {
	Printf(format string, v ...any)
}

// substrWriter counts the log lines that hold a substring.
type substrWriter struct {
	substr string
	hits   int
}

func (w *substrWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.substr) {
		w.hits++
	}
	return len(p), nil
}

// A Logger's SetOutput and its output methods, called through an
// interface of the program, hold the Logger's mutex: the Writer set up
// before SetOutput is seen by a later Write from the goroutine that logs.
func TestNoRaceLoggerInterfaceSetOutput(t *testing.T) {
	l := log.New(io.Discard, "", 0)
	var logger printfLogger = l
	started, stop, done := make(chan bool), make(chan bool), make(chan bool)
	go func() {
		close(started)
		for {
			select {
			case <-stop:
				close(done)
				return
			default:
				logger.Printf("tick")
				time.Sleep(time.Millisecond)
			}
		}
	}()
	<-started
	w := new(substrWriter)
	w.substr = "tick"
	l.SetOutput(w)
	time.Sleep(20 * time.Millisecond)
	close(stop)
	<-done
	if w.hits == 0 {
		t.Log("no line logged after SetOutput")
	}
}

// countingReader reads through an io.Reader it wraps (tus/tusd's
// bodyReader around a request body).
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	return n, err
}

// An io.Pipe's Write returns after a Read consumed its data: what the
// reader did before that Read is ordered before what the writer does
// after, even when the Read goes through wrappers racekit does not trace
// (http.MaxBytesReader) and an interface (held-out module tus/tusd/v2).
func TestNoRacePipeWriteAfterWrappedRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var stage string
	done := make(chan string)
	go func() {
		pw.Write([]byte("first "))
		done <- stage
	}()
	stage = "reading"
	body := &countingReader{r: http.MaxBytesReader(nil, pr, 100)}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(body, buf); err != nil {
		t.Fatal(err)
	}
	if s := <-done; s != "reading" {
		t.Fatal(s)
	}
}

// httpDoer is a program's own HTTP client interface (connectrpc's
// HTTPClient), which an *http.Client implements.
type httpDoer interface {
	Do(req *http.Request) (*http.Response, error)
}

// A Do through the program's own interface is an http.Client.Do: the
// handler's write after WriteHeader is ordered before the caller's read
// after the response (held-out module connectrpc.com/connect).
func TestNoRaceHTTPClientInterfaceDo(t *testing.T) {
	var called bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		called = true
	}))
	defer srv.Close()
	var client httpDoer = srv.Client()
	req, err := http.NewRequest("GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *http.Response)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	resp := <-done
	if resp != nil {
		resp.Body.Close()
	}
	if !called {
		t.Fatal("handler not called")
	}
}
