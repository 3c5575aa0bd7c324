// Package tracefile opens and creates trace files in any of racekit's three
// formats, choosing the format from the file's content when reading and
// from its extension (or an explicit name) when writing.
package tracefile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
	"github.com/racekit/racekit/trace/text"
)

// Format names a trace encoding.
type Format string

const (
	Binary Format = "rkt"  // racekit binary (.rkt)
	STD    Format = "std"  // RAPID's STD text (.std)
	Text   Format = "rktx" // racekit text, a superset of STD (.rktx)
)

// ParseFormat accepts a format name as users type it.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimPrefix(s, ".")) {
	case "rkt", "bin", "binary":
		return Binary, nil
	case "std", "rapid":
		return STD, nil
	case "rktx", "text", "txt":
		return Text, nil
	}
	return "", fmt.Errorf("unknown trace format %q (want rkt, std or rktx)", s)
}

// FormatOfPath guesses a format from a file name's extension; "" if none
// fits.
func FormatOfPath(path string) Format {
	f, err := ParseFormat(filepath.Ext(path))
	if err != nil {
		return ""
	}
	return f
}

// Sniff tells binary from text by the first bytes of a file. Text is read
// with the racekit text reader, which accepts all of STD.
func Sniff(prefix []byte) Format {
	// A prefix of the magic counts: a file cut off inside its header is
	// still a (damaged) binary trace, and its reader says so.
	if len(prefix) > 0 && strings.HasPrefix(rkt.Magic, string(prefix[:min(len(prefix), len(rkt.Magic))])) {
		return Binary
	}
	return Text
}

// File is an open trace.
type File struct {
	trace.Reader
	Format Format
	Name   string
	closer io.Closer
}

// KeepRanges asks the format's reader to return range events whole (see
// rkt.Reader.KeepRanges), and reports whether it will: formats without
// range events have none to keep.
func (f *File) KeepRanges() bool {
	k, ok := f.Reader.(interface{ KeepRanges() bool })
	return ok && k.KeepRanges()
}

// KeepGoAtomics asks the format's reader to return atomic operations
// recorded with trace.FlagGoAtomic whole (see rkt.Reader.KeepGoAtomics),
// and reports whether it will.
func (f *File) KeepGoAtomics() bool {
	k, ok := f.Reader.(interface{ KeepGoAtomics() bool })
	return ok && k.KeepGoAtomics()
}

// Close closes the underlying file.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// Open opens the trace at path ("-" is standard input) and sniffs its format.
func Open(path string) (*File, error) {
	var rc io.ReadCloser = os.Stdin
	name := "<stdin>"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		rc, name = f, path
	}
	br := bufio.NewReaderSize(rc, 1<<20)
	prefix, _ := br.Peek(len(rkt.Magic))
	tf := &File{Name: name, closer: rc}
	switch tf.Format = Sniff(prefix); tf.Format {
	case Binary:
		tf.Reader = rkt.NewReader(br, name)
	default:
		if FormatOfPath(path) == STD {
			tf.Format = STD
			tf.Reader = text.NewRAPIDReader(text.NewSTDReader(br, name))
		} else {
			tf.Reader = text.NewTextReader(br, name)
		}
	}
	return tf, nil
}

// Writer is a trace.Writer over a file; Close flushes and closes both.
type Writer struct {
	trace.Writer
	buf  *bufio.Writer
	file io.Closer
}

// Close finishes the trace and closes the file.
func (w *Writer) Close() error {
	err := w.Writer.Close()
	if ferr := w.buf.Flush(); err == nil {
		err = ferr
	}
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Options tune Create.
type Options struct {
	// Lossy lets the STD writer drop ops STD cannot express instead of
	// failing on the first one.
	Lossy bool
}

// Create creates path ("-" is standard output) in format f; an empty f is
// taken from the extension, defaulting to binary.
func Create(path string, f Format, opt Options) (*Writer, error) {
	if f == "" {
		if f = FormatOfPath(path); f == "" {
			f = Binary
		}
	}
	var out io.Writer = os.Stdout
	var file io.Closer
	if path != "-" {
		fh, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		out, file = fh, fh
	}
	buf := bufio.NewWriterSize(out, 1<<20)
	w := &Writer{buf: buf, file: file}
	switch f {
	case Binary:
		w.Writer = rkt.NewWriter(buf)
	case STD:
		sw := text.NewSTDWriter(buf)
		sw.Lossy = opt.Lossy
		w.Writer = sw
	case Text:
		w.Writer = text.NewTextWriter(buf)
	default:
		if file != nil {
			file.Close()
		}
		return nil, fmt.Errorf("unknown trace format %q", f)
	}
	return w, nil
}

// Save writes tr to a new binary trace file at path (tests and generated
// traces).
func Save(path string, tr *trace.Trace) error {
	w, err := Create(path, Binary, Options{})
	if err != nil {
		return err
	}
	if _, err := trace.Copy(w, tr.Iter()); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// List returns the binary trace files (*.rkt) in dir, sorted; none if dir
// cannot be read. A run that writes one trace per process (racekit test)
// leaves them side by side there.
func List(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".rkt") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}
