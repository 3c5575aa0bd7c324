package tracefile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/trace/rkt"
)

// Following a trace while its program runs. A test binary writes its
// trace as it goes, so its analysis can run beside it and end soon after
// it: the reader waits at the file's end for more until the writer's
// process is gone. Only the file's last holdBack bytes are left unread
// while it runs: the writer may end the file with a checkpoint's end block
// and later write over it (rkt.Writer.SetCheckpoints); an end block is
// shorter than holdBack, so no byte read is ever rewritten.
const holdBack = 32

// followPoll bounds the wait between two looks at a file that has not
// grown.
const followPoll = 20 * time.Millisecond

// TracePID is the process id in the name of a trace file an instrumented
// binary writes into a trace directory (NAME.PID.rkt, package rt).
func TracePID(path string) (int, bool) {
	name := strings.TrimSuffix(filepath.Base(path), ".rkt")
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(name[i+1:])
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// CanFollow reports whether Follow can tell when the process that writes
// path is gone, on this system.
func CanFollow(path string) bool {
	pid, ok := TracePID(path)
	if !ok {
		return false
	}
	_, known := processAlive(pid)
	return known
}

// Follow opens the binary trace at path, written by the live process its
// name carries (TracePID), and reads it as it grows: a read at the end
// waits until more is written or the process has exited, and only then
// does the reader see the file's end. Check CanFollow first.
func Follow(path string) (*File, error) {
	pid, ok := TracePID(path)
	if !ok {
		return nil, errors.New("tracefile: " + path + ": no process id in the name")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fr := &followReader{f: f, alive: func() bool { a, _ := processAlive(pid); return a }}
	br := bufio.NewReaderSize(fr, 1<<20)
	return &File{Reader: rkt.NewReader(br, path), Format: Binary, Name: path, closer: f}, nil
}

type followReader struct {
	f     *os.File
	off   int64
	alive func() bool
}

func (r *followReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	wait := time.Millisecond
	for {
		// Whether the writer is gone, before the size: a size taken
		// after its death is final.
		dead := !r.alive()
		fi, err := r.f.Stat()
		if err != nil {
			return 0, err
		}
		limit := fi.Size()
		if !dead {
			limit -= holdBack
		}
		if r.off < limit {
			n, err := r.f.ReadAt(p[:min(int64(len(p)), limit-r.off)], r.off)
			r.off += int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
		} else if dead {
			return 0, io.EOF
		}
		time.Sleep(wait)
		wait = min(2*wait, followPoll)
	}
}
