package p

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

var n int64

func ptrDelta() (*int64, int64)  { return &n, 2 }
func rw() (io.Writer, io.Reader) { return os.Stdout, strings.NewReader("copy\n") }
func kv() (any, any)             { return "k", 1 }
func sl() (any, func(i, j int) bool) {
	s := []int{3, 1, 2}
	return s, func(i, j int) bool { return s[i] < s[j] }
}
func data() ([]byte, any)          { var v map[string]int; return []byte(`{"a":1}`), &v }
func bufArgs() ([]byte, int64)     { return make([]byte, 4), 0 }
func wr() (io.Writer, string)      { return &bytes.Buffer{}, "x" }
func lockPair() (*sync.Mutex, int) { return &sync.Mutex{}, 1 }
func fmtArgs() (string, int)       { return "%d\n", 7 }

type S struct{ mu sync.Mutex }

func (s *S) Do(mu *sync.Mutex, k int) int { mu.Lock(); mu.Unlock(); return k }

func Spread() {
	atomic.AddInt64(ptrDelta())
	atomic.StoreInt64(ptrDelta())
	io.Copy(rw())
	var m sync.Map
	m.Store(kv())
	m.LoadOrStore(kv())
	sort.Slice(sl())
	json.Unmarshal(data())
	b := bytes.NewReader([]byte("abcdef"))
	b.ReadAt(bufArgs())
	io.WriteString(wr())
	fmt.Printf(fmtArgs())
	var s S
	s.Do(lockPair())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); atomic.AddInt64(ptrDelta()) }()
	defer fmt.Println(fmtArgs())
	go fmt.Println(fmtArgs())
	wg.Add(3)
	go func(f string, k int) { defer wg.Done(); fmt.Printf(f, k) }(fmtArgs())
	go func() { defer wg.Done(); defer atomic.AddInt64(ptrDelta()); defer m.Store(kv()) }()
	go func() { defer wg.Done(); s.Do(lockPair()) }()
	go atomic.AddInt64(ptrDelta())
	go m.Store(kv())
	go s.Do(lockPair())
	wg.Wait()
	fmt.Println(n)
}
