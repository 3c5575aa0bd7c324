// Package chanhandoff is channel ownership in Go: a value sent on a
// channel belongs to the receiver. The pipeline here recycles buffers
// correctly: a producer fills a buffer it took from the free list, sends
// it, and never touches it again; the consumer reads it and sends it back
// on the free list. No lock is involved, so a lockset detector flags every
// buffer access; the channel operations order them (norace).
//
// The logger beside it breaks ownership: it sends a pointer to its record
// and then keeps reusing the same record for the next message, writing
// fields the receiver is reading.
package chanhandoff

import (
	"runtime"
	"sync"
)

// Buffer is recycled between producer and consumer.
type Buffer struct {
	data [16]int
	n    int
}

// Pipeline moves count batches of numbers through nbuf recycled buffers
// and returns their sum.
func Pipeline(count, nbuf int) int {
	free := make(chan *Buffer, nbuf)
	full := make(chan *Buffer, nbuf)
	for i := 0; i < nbuf; i++ {
		free <- &Buffer{}
	}
	done := make(chan int)
	go func() { // consumer
		sum := 0
		for b := range full {
			for i := 0; i < b.n; i++ { // racekit:norace id=ch-n why="the producer's send on full orders its writes before this receive"
				sum += b.data[i] // racekit:norace id=ch-data why="see ch-n"
			}
			free <- b
		}
		done <- sum
	}()
	for k := 0; k < count; k++ { // producer
		b := <-free
		b.n = 1 + k%len(b.data) // racekit:norace id=ch-n why="the consumer's send on free orders its reads before this receive"
		for i := 0; i < b.n; i++ {
			b.data[i] = k + i // racekit:norace id=ch-data why="see ch-n"
		}
		full <- b
	}
	close(full)
	return <-done
}

// Record is a log message.
type Record struct {
	Seq   int
	Level int
}

// LogBuggy sends count records to a log writer, reusing one Record: after
// the send, the next iteration overwrites the record the writer got, while
// the writer is reading it or, later, writing its line out.
func LogBuggy(count int) (sum int) {
	out := make(chan *Record)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := range out {
			// Reads the record the sender refills after the send.
			line := r.Seq*10 + r.Level // racekit:race id=ch-reuse-seq,ch-reuse-level kind=race benign=false
			sum += emit(line)
		}
	}()
	rec := &Record{}
	for i := 0; i < count; i++ {
		rec.Seq = i       // racekit:race id=ch-reuse-seq kind=race benign=false
		rec.Level = i % 3 // racekit:race id=ch-reuse-level kind=race benign=false
		out <- rec
	}
	close(out)
	wg.Wait()
	return sum
}

// emit stands for formatting and writing a log line; it returns the line
// (the checksum counts the records). The yield stands for the write
// system call, during which the sender gets to run: Go's scheduler runs a
// sender woken by a receive only when the receiver gives up its processor.
func emit(line int) int {
	x := line + 1
	for i := 0; i < 1000; i++ {
		x = x*1103515245 + 12345
	}
	runtime.Gosched()
	return line + x&0
}

// PipelineSum is what Pipeline must return.
func PipelineSum(count, size int) int {
	s := 0
	for k := 0; k < count; k++ {
		n := 1 + k%size
		for i := 0; i < n; i++ {
			s += k + i
		}
	}
	return s
}

// Config sizes a run.
type Config struct {
	Batches int
	Buffers int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Batches: 20, Buffers: 3} }

// Result holds both sums.
type Result struct {
	Pipeline int // the recycling pipeline's sum: exact
	Log      int // the logger's checksum: may be wrong
}

// Run runs both.
func Run(cfg Config) Result {
	return Result{Pipeline: Pipeline(cfg.Batches, cfg.Buffers), Log: LogBuggy(cfg.Batches)}
}
