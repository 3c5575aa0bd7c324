// Race-free churn of objects the standard library allocates (issue 28,
// memory reuse): each worker, alone, makes requests with http.NewRequest
// and (*http.Request).WithContext and writes their fields (the URL and
// Header NewRequest made for them too), splits strings
// and writes the parts, parses a query and writes its map, then drops them
// all. The garbage collector hands their memory out again to other
// workers' requests, slices and maps, and the workers never synchronize
// with each other: a detector that does not see these objects created
// relates the accesses of a dead one and a live one at one address (a
// routing library writing r.Pattern on each request did, under racekit:
// go-chi/chi's TestMuxContextIsThreadSafe). Timers and tickers too, made
// by the runtime (time.NewTimer, NewTicker, AfterFunc), among objects of
// their size that the workers write (reading a timer's C at the address of
// another worker's dead object did, under racekit: go-quartz's
// TestScheduler_BlockingSemantics); and the arrays a bytes.Buffer and a
// big.Int hold, which their packages allocate and regrow (a Buffer's
// String and a big.Int's arithmetic read them: rt's internalArray), among
// the workers' byte slices; and the buffer a bufio.Reader fills, which
// the program reads through Peek (a bufio.Reader's buffer, read through
// Peek at the address of another worker's dead []byte, did under racekit:
// hashicorp/memberlist's peekedConn), and that bufio hands to the
// program's own Read method to fill (memberlist's peekedConn.Read wrote
// into it at such an address); and a listener's address, which net
// allocates at Listen (memberlist read its IP at a dead object's address),
// among the workers' objects of its size; and the objects package reflect
// allocates (reflect.New, MakeSlice, MakeMap: a decoder's; a msgpack
// decoder's SetMapIndex wrote into a map MakeMap had made at a dead
// object's address, under racekit with serf's dependencies traced), written
// through reflect among the workers' blocks and byte slices; and the maps
// and slices json.Unmarshal makes for a document decoded into an empty
// interface, written by the program (serf's agent config, decoded into an
// interface and walked by mapstructure); and a bufio.Writer over a
// bytes.Buffer (serf's Snapshotter writes one over its file). No race.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"
)

const (
	workers = 4
	rounds  = 200
)

// block has the size class of the runtime's timers (time.Timer and
// time.Ticker are the first words of a runtime object of 224 bytes).
type block [28]int

// small has the size of a *net.TCPAddr (and of a map's header); mid of
// json's []any of six numbers.
type (
	small [6]int
	mid   [12]int
)

// sinks, bsinks and ssinks keep each worker's last block, byte slice and
// small on the heap.
var (
	sinks  [workers]*block
	bsinks [workers][]byte
	ssinks [workers]*small
	msinks [workers]*mid
	wsinks [workers]*bufio.Writer
)

func worker(id int, u *url.URL, out *int) {
	total := 0
	for r := 0; r < rounds; r++ {
		req, err := http.NewRequest("GET", "/x", nil)
		if err != nil {
			panic(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req = req.WithContext(ctx)
		req.Pattern = fmt.Sprint(id)
		total += len(req.Pattern)
		req.URL.RawQuery = req.Pattern // the URL NewRequest made
		req.Header["X-Worker"] = nil   // and its Header
		total += len(req.URL.RawQuery) + len(req.Header)
		parts := strings.Split("a,b,c,d", ",")
		parts[id%4] = "x"
		total += len(parts[0])
		q := u.Query()
		q.Set("w", parts[1])
		total += len(q)
		cancel()
		for i := 0; i < 4; i++ {
			b := new(block)
			b[0], b[1] = id, r
			total += b[0] + b[1]
			sinks[id] = b
		}
		for i := 0; i < 8; i++ {
			w := make([]byte, 64)
			w[0], w[63] = byte(id), byte(r)
			bsinks[id] = w
		}
		var b bytes.Buffer // its bytes: arrays bytes allocates and grows
		for i := 0; i < 5; i++ {
			b.WriteString("abcdefghijkl")
		}
		total += len(b.String())
		br := bufio.NewReaderSize(strings.NewReader("0123456789abcdefghijklmnopqrstuvwxyz"), 64)
		if p, err := br.Peek(16); err == nil { // its buffer: bufio's
			total += int(p[0]) + int(p[15])
		}
		if line, err := br.ReadSlice('z'); err == nil {
			total += int(line[1])
		}
		if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
			total += ln.Addr().(*net.TCPAddr).Port + len(ln.Addr().(*net.TCPAddr).IP)
			ln.Close()
		}
		for i := 0; i < 4; i++ {
			s := new(small)
			s[0], s[5] = id, r
			ssinks[id] = s
			m := new(mid)
			m[0] = r
			msinks[id] = m
		}
		var rd io.Reader = bufio.NewReaderSize(&counter{n: id}, 64) // bufio calls counter.Read with its buffer
		var one [2]byte
		if _, err := io.ReadFull(rd, one[:]); err == nil {
			total += int(one[1])
		}
		rv := reflect.New(reflect.TypeFor[block]()).Elem() // objects reflect allocates
		rv.Index(0).SetInt(int64(id))
		sl := reflect.MakeSlice(reflect.TypeFor[[]byte](), 64, 64)
		sl.Index(63).SetUint(uint64(r))
		mv := reflect.MakeMapWithSize(reflect.TypeFor[map[int]int](), 8)
		mv.SetMapIndex(reflect.ValueOf(id), reflect.ValueOf(r))
		total += int(rv.Index(0).Int()) + int(sl.Index(63).Uint()) + mv.Len()
		var doc any // maps and a slice json allocates
		err = json.Unmarshal([]byte(`{"a":{"b":[1,2,3,4,5,6]},"c":{"d":1}}`), &doc)
		if err != nil {
			panic(err)
		}
		top := doc.(map[string]any)
		top["w"] = id
		inner := top["a"].(map[string]any)
		inner["x"] = r
		arr := inner["b"].([]any)
		arr[0] = id
		total += len(top) + len(inner) + len(arr)
		var out bytes.Buffer // a bufio.Writer over it: bufio's new Writer
		bw := bufio.NewWriter(&out)
		bw.WriteString("abcdefgh")
		bw.Flush()
		total += out.Len()
		wsinks[id] = bw                          // on the heap
		x := new(big.Int).SetInt64(int64(r + 1)) // its words: math/big's
		x.Lsh(x, 300)
		x.Add(x, x)
		total += x.BitLen()
		tm := time.NewTimer(time.Hour)
		tk := time.NewTicker(time.Hour)
		af := time.AfterFunc(time.Hour, func() {})
		if tm.C == nil || tk.C == nil || af.C != nil {
			panic("timers")
		}
		tm.Stop()
		tk.Stop()
		af.Stop()
		if r%40 == 0 {
			runtime.GC()
		}
	}
	*out = total
}

// counter is a reader of the program's: bufio calls its Read.
type counter struct{ n int }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c.n + i)
	}
	c.n++
	return len(p), nil
}

func main() {
	u, _ := url.Parse("http://h/p?a=1&b=2")
	outs := make([]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(w, u, &outs[w])
		}()
	}
	wg.Wait()
	sum := 0
	for _, v := range outs {
		sum += v
	}
	fmt.Println(sum > 0)
}
