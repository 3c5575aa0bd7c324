// Race-free churn of memory the standard library allocates where rt cannot
// see it (issue 28, memory reuse): each worker decodes JSON into a private
// value (encoding/json allocates its slice and map), appends to nil slices
// through strconv and fmt, and decodes hex, and writes into all of them; the
// garbage collector hands the memory of one worker's dead arrays to
// another's new ones. rt sees those allocations only through the runtime's
// allocation hook (instrument/runtimehook.go): without it, a write into a
// new array met the dead array's writes at its address, a false race. No
// race.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
)

const (
	workers = 4
	rounds  = 300
)

type doc struct {
	Vals []int64
	Tags map[string]int
}

func main() {
	var mu sync.Mutex
	total := int64(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			data := []byte(fmt.Sprintf(`{"Vals":[%d,2,3,4,5,6,7,8,9,10,11,12],"Tags":{"a":%d}}`, w, w))
			for r := 0; r < rounds; r++ {
				var d doc
				if err := json.Unmarshal(data, &d); err != nil {
					panic(err)
				}
				sum := int64(0)
				for i := range d.Vals {
					d.Vals[i] += int64(r)
					sum += d.Vals[i]
				}
				d.Tags["a"] += r
				num := strconv.AppendInt(nil, int64(r*w), 10)
				num[0] = '1'
				msg := fmt.Appendf(nil, "w%d r%d", w, r)
				msg[0] = 'W'
				raw, err := hex.DecodeString("00112233445566778899aabbccddeeff")
				if err != nil {
					panic(err)
				}
				raw[r%len(raw)]++
				sum += int64(num[0]) + int64(msg[0]) + int64(raw[0])
				if r%50 == 0 {
					runtime.GC()
				}
				mu.Lock()
				total += sum + int64(d.Tags["a"])
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("total", total)
}
