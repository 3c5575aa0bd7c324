package instrument

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// Interceptors: what calls into the standard library read and write.
//
// The standard library is not traced, so a race inside its code (two
// goroutines appending to one strings.Builder, sorting a slice another one
// reads) records nothing. Like ThreadSanitizer's libc interceptors, the
// table below says, for std functions and methods that do no
// synchronization of their own, which of the call's operands the function
// reads or writes, and how; the rewriter records those accesses at the
// call, right before it, at the call's site (the user's line, which is
// what the report must show), with the hooks user code uses for the same
// accesses. Functions not in the table record nothing: in particular the
// internally synchronized ones (sync.Map, sync.Pool, log.Logger, os.File,
// net/http, database/sql, atomic.Value, sync.OnceValue) must never be
// added, since their accesses are ordered by locks the trace cannot see;
// but for an O effect, which records the object's own lock with them.
//
// An entry is "operand:effect ...", operand "r" (the receiver, a pointer
// method's: the object it points to) or an argument's index, effect:
//
//	R, W    read / write the object the pointer operand points to: one
//	        event at its first word (rt.R1, rt.W1), which stands for the
//	        whole object, as for a slice header: the fields of these types
//	        are unexported, so user code reaches them only through methods
//	        (all recorded at that word) or by copying or assigning the whole
//	        value (every word recorded, the first included); an exported
//	        field (list.Element.Value) is not touched by the methods
//	        recorded, and keeps its own address. One event instead of one
//	        per word also keeps dedup: a bufio.Scanner is 17 words.
//	D       read the object (its first word) and the elements of the slices
//	        it holds directly (rt.RDeep: a big.Int's words, a bytes.Buffer's
//	        bytes)
//	DP      D for an object whose slices hold arrays the program made and
//	        gave it (a net.TCPAddr's IP: rt.RDeepProgram): D records the
//	        allocation of an array the first time it is seen with its
//	        object, as std made it, which would hide the program's earlier
//	        accesses to it
//	RA, WA  R or W, for a method that hands the program an array the
//	        object holds (bytes.Buffer.Bytes, bufio.Reader.Peek): records
//	        that array's allocation when first seen with its object
//	        (rt.R1Arrays, rt.W1Arrays), since std allocated it unseen
//	ER, EW  read / write every element of the slice operand (rt.Elems,
//	        rt.ElemsW; up to 256 events)
//	EB      ER for the buffer a writer's Write copies, called in loops:
//	        one range event for a []byte's bytes (rt.ElemsWords; the io
//	        subject's 100k bufio.Writer.Write calls of a 24-byte line cost
//	        10x more with one event per byte); without range events one
//	        event per 8 bytes, which misses a racing write of a byte
//	        between two of those words
//	ES      a sort of the slice operand: a read of every element before
//	        the call (rt.SortPre, which keeps a copy of them) and a write
//	        of each element whose bytes changed after it (rt.SortPost, the
//	        statement after the call's): a sort of a sorted slice writes
//	        nothing, as the Go race detector sees it
//	EFn, EFWn, ELn  read the first n bytes of a []byte operand (all of
//	        it when shorter), write the first n, read the last n; n is a
//	        number, or @k: the length of argument k, when that can be
//	        evaluated again (reevaluable; else the whole operand: ER) (rt.BytesFirst,
//	        rt.BytesFirstW, rt.BytesLast): a call that decodes or encodes one
//	        value at the start or the end of a buffer it is given
//	        (binary.Uvarint(b[i:]) reads at most binary.MaxVarintLen64 bytes;
//	        ER would name the whole tail, and cost its length at each call)
//	EIn     an index function's read of a slice operand: up to the
//	        match it returns, n elements of it included (n a number, or @k:
//	        the length of argument k), all of it when there is none; the
//	        call is wrapped (rt.ElemsUpTo, after it returns) and the
//	        operand evaluated again, so only a reevaluable one (else ER):
//	        a parser's bytes.IndexByte(rest, '"') at each step read the
//	        whole rest of its input each time (held-out segmentio/encoding:
//	        61 billion byte reads in a test -race runs in 5 s)
//	EWB     the write of the bytes a reader's Read fills: the first n
//	        bytes of the buffer, n its first result, recorded after the call
//	        (rt.Filled(r.Read(rt.FillW(b, ...))), for results exactly (int,
//	        error)), as the Go race detector records the n bytes a read
//	        system call wrote, or at a release inside the call (all of it);
//	        else EW before the call, one event per 8 bytes (rt.ElemsWordsW):
//	        the whole buffer, which io.Reader's contract lets Read use as
//	        scratch space. A summary's EW of a Read's buffer (modref: a
//	        copy into it) is taken as EWB
//	MR, MW  read / write the map operand (one object: rt.MR, rt.MW)
//	IM      MR for the map an interface operand holds, if it holds one
//	        (rt.RAnyMap; a map-typed operand: rt.MR)
//	DS      what the String method of the value an interface receiver
//	        holds reads, when it is one of the DP or ER entries' types
//	        (rt.RStringer: c.LocalAddr().String() on a *net.UDPAddr)
//	WB      write the object an io.Writer argument points to, when its
//	        static type is *bytes.Buffer, *strings.Builder or *bufio.Writer
//	        (fmt.Fprintf(&b, ...): the Write it calls is one of theirs)
//	J       read what encoding/json's Marshal reads of the operand
//	        (rt.RJSON: exported fields, elements, pointers followed; stops
//	        at MarshalJSON and MarshalText methods)
//	F       read what fmt prints of the operand (rt.RFmt: every field,
//	        elements, a pointer argument's composite value; stops at
//	        String, Error and Format methods). "k+:F" is every argument
//	        from the k-th (the variadic ones); after a format argument
//	        only if the format is a constant without %T or %p (which
//	        print no value)
//	O=items the fields of the struct a pointer operand points to, each
//	        read or written where user code accesses it, inside the
//	        struct's own mutex if the function takes it (rt.Fields; items
//	        and layout: stdfields.go)
//
// Effects that would over-approximate are left out, so that no race is
// invented: slices.Delete writes only the tail, json.Unmarshal only the
// fields the data names, a Read the n bytes it returns.
//
// Keys are methodKey's and funcKey's ("bytes.Buffer.WriteString",
// "sort.Ints"). Beyond the table, every untraced Read, ReadAt, Write and
// WriteAt method with io's signatures, of a type or an interface (an
// os.File, a net.Conn, an io.Reader whatever it holds), reads (Write) or
// writes (Read) its buffer: ioBufEffect.
var stdTable = map[string]string{}

// stdEntries fills stdTable: each group is one effect for several names.
var stdEntries = []struct {
	effect string
	names  []string
}{
	// strings.Builder: appends write the Builder (its buf header); Len,
	// Cap and String read it.
	{"r:W", pre("strings.Builder.", "Write", "WriteByte", "WriteRune", "WriteString", "Grow", "Reset")},
	{"r:R", pre("strings.Builder.", "Len", "Cap", "String")},

	// bytes.Buffer: every method that appends, consumes or resets writes
	// the Buffer (buf header, read offset, lastRead); Write also reads its
	// argument's bytes; String copies the buffered bytes.
	{"r:W 0:EB", pre("bytes.Buffer.", "Write")},
	{"r:W", pre("bytes.Buffer.", "WriteByte", "WriteRune", "WriteString", "ReadFrom", "WriteTo",
		"Read", "ReadByte", "ReadRune", "ReadBytes", "ReadString", "UnreadByte", "UnreadRune",
		"Truncate", "Reset", "Grow")},
	{"r:R", pre("bytes.Buffer.", "Len", "Cap", "Available")},
	// Its bytes, handed to the program.
	{"r:WA", pre("bytes.Buffer.", "Next")},
	{"r:RA", pre("bytes.Buffer.", "Bytes", "AvailableBuffer")},
	{"r:D", pre("bytes.Buffer.", "String")},

	// bufio: a Writer's buffer and counters, a Reader's, a Scanner's.
	{"r:W 0:EB", pre("bufio.Writer.", "Write")},
	{"r:W", pre("bufio.Writer.", "WriteString", "WriteByte", "WriteRune", "Flush", "Reset", "ReadFrom")},
	{"r:R", pre("bufio.Writer.", "Available", "Buffered", "Size")},
	{"r:RA", pre("bufio.Writer.", "AvailableBuffer")},
	{"r:W", pre("bufio.Reader.", "Read", "ReadByte", "ReadRune", "ReadBytes", "ReadString",
		"Discard", "Reset", "UnreadByte", "UnreadRune", "WriteTo")},
	{"r:WA", pre("bufio.Reader.", "ReadLine", "ReadSlice", "Peek")}, // bytes of its buffer
	{"r:R", pre("bufio.Reader.", "Buffered", "Size")},
	{"r:W", pre("bufio.Scanner.", "Scan", "Buffer", "Split")},
	{"r:R", pre("bufio.Scanner.", "Text", "Err")},
	{"r:RA", pre("bufio.Scanner.", "Bytes")},

	// container/list: insertions, removals and moves write the List (its
	// root element and length); Remove also unlinks its element.
	{"r:W", pre("container/list.List.", "PushBack", "PushFront", "PushBackList", "PushFrontList",
		"InsertBefore", "InsertAfter", "MoveToFront", "MoveToBack", "MoveBefore", "MoveAfter", "Init")},
	{"r:W 0:W", pre("container/list.List.", "Remove")},
	{"r:R", pre("container/list.List.", "Len", "Front", "Back")},
	{"r:R", pre("container/list.Element.", "Next", "Prev")},

	// math/big.Int: z.Op(x, y) writes z, reads x and y with their words.
	{"r:W 0:D 1:D", pre("math/big.Int.", "Add", "Sub", "Mul", "Quo", "Rem", "Div", "Mod", "And", "Or", "Xor", "AndNot")},
	{"r:W 0:D", pre("math/big.Int.", "Set", "Neg", "Abs", "Not", "Sqrt")},
	{"r:W 0:D", pre("math/big.Int.", "Lsh", "Rsh")},
	{"r:W", pre("math/big.Int.", "SetInt64", "SetUint64", "SetString", "SetBytes")},
	{"r:D", pre("math/big.Int.", "String", "Text", "Int64", "Uint64", "Sign", "BitLen", "IsInt64",
		"IsUint64", "Bytes", "Bit", "TrailingZeroBits")},
	{"r:D 0:D", pre("math/big.Int.", "Cmp", "CmpAbs")},

	// math/rand's Rand: its state is in its Source, which every method
	// steps through an interface (which package modref does not follow);
	// a Rand is not safe for concurrent use, whatever its source.
	{"r:W", pre("math/rand.Rand.", "Int", "Intn", "Int31", "Int31n", "Int63", "Int63n", "Uint32", "Uint64",
		"Float32", "Float64", "Perm", "Shuffle", "Read", "NormFloat64", "ExpFloat64", "Seed")},
	{"r:W", pre("math/rand/v2.Rand.", "Int", "IntN", "Int32", "Int32N", "Int64", "Int64N", "Uint", "UintN",
		"Uint32", "Uint32N", "Uint64", "Uint64N", "Float32", "Float64", "Perm", "Shuffle", "NormFloat64", "ExpFloat64")},

	// Varints and runes: at most 10 (binary.MaxVarintLen64) or 4
	// (utf8.UTFMax) bytes at the start or the end of the buffer.
	{"0:EF10", pre("encoding/binary.", "Uvarint", "Varint")},
	{"0:EFW10", pre("encoding/binary.", "PutUvarint", "PutVarint")},
	// Fixed-size integers at the start of the buffer (binary.LittleEndian
	// and BigEndian, whose methods are on unexported types; a call
	// through the ByteOrder interface records nothing).
	{"0:EF2", byteOrders("Uint16")},
	{"0:EF4", byteOrders("Uint32")},
	{"0:EF8", byteOrders("Uint64")},
	{"0:EFW2", byteOrders("PutUint16")},
	{"0:EFW4", byteOrders("PutUint32")},
	{"0:EFW8", byteOrders("PutUint64")},
	{"0:EF4", pre("unicode/utf8.", "DecodeRune", "FullRune")},
	{"0:EFW4", pre("unicode/utf8.", "EncodeRune")},
	{"0:EL4", pre("unicode/utf8.", "DecodeLastRune")},

	// Sorting reads every element and writes those it moves (ES).
	{"0:ES", pre("sort.", "Ints", "Strings", "Float64s", "Slice", "SliceStable")},
	{"0:ER", pre("sort.", "IntsAreSorted", "StringsAreSorted", "Float64sAreSorted", "SearchInts",
		"SearchStrings", "SearchFloat64s", "SliceIsSorted")},
	{"0:ES", pre("slices.", "Sort", "SortFunc", "SortStableFunc")},
	{"0:EW", pre("slices.", "Reverse")},
	{"0:ER", pre("slices.", "Contains", "ContainsFunc", "Max", "MaxFunc", "Min",
		"MinFunc", "IsSorted", "IsSortedFunc", "BinarySearch", "BinarySearchFunc", "Clone")},
	{"0:EI1", pre("slices.", "Index", "IndexFunc")}, // up to the match, as -race sees its loop
	{"0:ER 1:ER", pre("slices.", "Equal", "EqualFunc", "Compare", "CompareFunc")},
	{"0:ER 1:ER", pre("bytes.", "Equal", "Compare", "Contains", "Count")},
	{"0:EI@1 1:ER", pre("bytes.", "Index")},
	{"0:EI1", pre("bytes.", "IndexByte")},
	// Their match is one rune: at most utf8.UTFMax bytes past its index,
	// all of them counted (fewer than before, the whole operand).
	{"0:EI4", pre("bytes.", "IndexAny", "IndexRune", "IndexFunc")},
	// HasPrefix(s, prefix) compares s[:len(prefix)] (HasSuffix the end):
	// a parser that asks it of the rest of its input at each step
	// (held-out yuin/goldmark's raw HTML) read the whole rest each time.
	{"0:EF@1 1:ER", pre("bytes.", "HasPrefix")},
	{"0:EL@1 1:ER", pre("bytes.", "HasSuffix")},
	{"0:ER", pre("bytes.", "Clone", "ContainsRune", "ContainsAny")},

	// maps: dst written, src read (a map is one object).
	{"0:MW 1:MR", pre("maps.", "Copy")},
	{"0:MR", pre("maps.", "Clone")},
	{"0:MR 1:MR", pre("maps.", "Equal", "EqualFunc")},
	{"0:MW", pre("maps.", "DeleteFunc")},

	// Printing into a buffer writes it (the writer's own type only: any
	// other io.Writer may lock, as os.File and log.Logger's do).
	{"0:WB 1+:F", pre("fmt.", "Fprint", "Fprintln")},
	{"0:WB 2+:F", pre("fmt.", "Fprintf")},

	// fmt reads what it prints of its operands (by reflection, or by
	// calling their String and Error methods: traced code).
	{"0+:F", pre("fmt.", "Sprint", "Sprintln", "Print", "Println", "Append", "Appendln")},
	{"1+:F", pre("fmt.", "Sprintf", "Printf", "Errorf")},
	{"2+:F", pre("fmt.", "Appendf")},
	{"0:WB", pre("io.", "WriteString", "Copy", "CopyN", "CopyBuffer")},

	// Scanning stores into what its operands point to (a *int, a
	// *string...: one word for the variable).
	{"1+:W", pre("fmt.", "Sscan", "Sscanln", "Fscan", "Fscanln")},
	{"0+:W", pre("fmt.", "Scan", "Scanln")},
	{"2+:W", pre("fmt.", "Sscanf", "Fscanf")},
	{"1+:W", pre("fmt.", "Scanf")},

	// encoding/json: Marshal reads the value; Unmarshal reads the data
	// (what it writes depends on the data: not recorded).
	{"0:J", pre("encoding/json.", "Marshal", "MarshalIndent")},
	{"0:J", pre("encoding/json.Encoder.", "Encode")},
	{"0:ER", pre("encoding/json.", "Unmarshal", "Valid")},
	// A Decoder's reads, decodes and tokens move its offset in its buffer
	// (scanp) and may refill it: the Decoder is written (its type cache is
	// synchronized, so modref gives Decode nothing). Its exported methods
	// are all there is of it: it has no exported field.
	{"r:W", pre("encoding/json.Decoder.", "Decode", "Token", "More", "UseNumber", "DisallowUnknownFields")},
	{"r:R", pre("encoding/json.Decoder.", "Buffered", "InputOffset")},

	// A template reads the data it executes; a map given as the data is
	// read as Go reads a map, one object (the fields a struct's template
	// names are not known here: a struct is not recorded).
	{"1:IM", []string{"text/template.Template.Execute", "html/template.Template.Execute"}},
	{"2:IM", []string{"text/template.Template.ExecuteTemplate", "html/template.Template.ExecuteTemplate"}},

	// net's addresses: formatting one reads its IP's bytes (and a mask's),
	// which the program may share (hashicorp/serf's mDNS agent formats a
	// TCPAddr around an IP that miekg/dns's unpacking wrote); package
	// modref describes only the address struct itself.
	{"r:DP", pre("net.TCPAddr.", "String", "AddrPort")},
	{"r:DP", pre("net.UDPAddr.", "String", "AddrPort")},
	{"r:DP", pre("net.IPAddr.", "String")},
	{"r:DP", pre("net.IPNet.", "String")},
	{"r:DS", []string{"net.Addr.String", "fmt.Stringer.String"}},

	// A Logger's SetOutput swaps its Writer under the Logger's own mutex,
	// the one its output methods hold around the Writer's Write
	// (callbacklock.go): what the program did to the Writer before handing
	// it over is ordered before a later Write from another goroutine
	// (IBM/sarama's tests point the global Logger at a new Writer while a
	// goroutine an earlier test left behind logs: held-out batch BM).
	// modref gives it nothing (it also stores an atomic).
	{"r:O=lock:outMu,w:out", []string{"log.Logger.SetOutput"}},

	// io's helpers fill their buffer argument (see ioBufEffect).
	{"1:EWB", pre("io.", "ReadFull", "ReadAtLeast")},
	{"1:EB", pre("os.", "WriteFile")},
}

// byteOrders names method m of binary.LittleEndian's and BigEndian's
// types.
func byteOrders(m string) []string {
	return []string{"encoding/binary.littleEndian." + m, "encoding/binary.bigEndian." + m}
}

func pre(p string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

func init() {
	for _, e := range stdEntries {
		for _, n := range e.names {
			if _, dup := stdTable[n]; dup {
				panic("instrument: stdTable: " + n + " twice")
			}
			stdTable[n] = e.effect
		}
	}
}

// stdEffect is one access of an intercepted call.
type stdEffect struct {
	operand int    // -1: the receiver; else an argument
	kind    string // R, W, D, ER, EW, MR, MW, J, F...
	rest    bool   // every argument from operand on (expandRest)
	bound   string // EF, EFW, EL: the most bytes accessed; O: rt.Fields' layout, quoted
	lenOf   int    // EF@k, EL@k: k+1, the bound is len of argument k
}

// stdEffectsOf returns the effects of a call of fn (nil: not in the table).
func stdEffectsOf(fn *types.Func) []stdEffect {
	if fn == nil || fn.Pkg() == nil {
		return nil
	}
	spec, ok := stdTable[stdKey(fn)]
	if !ok {
		spec = modrefStd[stdKey(fn)]
	}
	if e := ioBufEffect(fn); e != "" {
		if e == "0:EWB" {
			// A summary's write of the whole buffer: the bytes the
			// call reports, as for any Read.
			spec = strings.Join(slices.DeleteFunc(strings.Fields(spec), func(f string) bool { return f == "0:EW" }), " ")
		}
		if !strings.Contains(" "+spec, " 0:") {
			spec += " " + e
		}
	}
	if spec == "" {
		return nil
	}
	var out []stdEffect
	for _, f := range strings.Fields(spec) {
		op, kind, _ := strings.Cut(f, ":")
		i := -1
		op, rest := strings.CutSuffix(op, "+")
		if op != "r" {
			i, _ = strconv.Atoi(op)
		}
		var bound string
		if items, ok := strings.CutPrefix(kind, "O="); ok {
			// Fields by name: the layout is the operand type's (stdfields.go).
			if layout, ok := objectLayout(fn, i, items); ok {
				out = append(out, stdEffect{operand: i, kind: "O", bound: layout})
			}
			continue
		}
		lenOf := 0
		if k, arg, ok := strings.Cut(kind, "@"); ok {
			n, _ := strconv.Atoi(arg)
			kind, lenOf = k, n+1 // EF@1: EF, the length of argument 1
		} else if j := strings.IndexAny(kind, "0123456789"); j > 0 {
			kind, bound = kind[:j], kind[j:] // EF10: EF, 10
		}
		out = append(out, stdEffect{operand: i, kind: kind, rest: rest, bound: bound, lenOf: lenOf})
	}
	return out
}

// expandRest replaces each effect on "every argument from k" by one
// effect per argument of the call (nargs of them); those of an F effect
// after a format argument only if formatOK says the format prints values.
func expandRest(effs []stdEffect, nargs int, formatOK func(i int) bool) []stdEffect {
	var out []stdEffect
	for _, e := range effs {
		if !e.rest {
			out = append(out, e)
			continue
		}
		if e.kind == "F" && e.operand > 0 && !formatOK(e.operand-1) {
			continue
		}
		for i := e.operand; i < nargs; i++ {
			out = append(out, stdEffect{operand: i, kind: e.kind, bound: e.bound, lenOf: e.lenOf})
		}
	}
	return out
}

// fmtValueFormat reports whether the format argument x is a constant
// whose verbs all print their operand's value (none is %T or %p).
func (r *rewriter) fmtValueFormat(x ast.Expr) bool {
	tv, ok := r.info.Types[x]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return false
	}
	f := constant.StringVal(tv.Value)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		// Skip flags, width, precision and argument indexes to the verb.
		j := i + 1
		for j < len(f) && strings.IndexByte("+-# 0123456789.*[]", f[j]) >= 0 {
			j++
		}
		if j < len(f) && (f[j] == 'T' || f[j] == 'p') {
			return false
		}
		i = j
	}
	return true
}

// ioBufEffect is the effect of a method with io.Reader's Read or
// io.ReaderAt's ReadAt signature on its buffer (EWB), or of one with
// io.Writer's Write or io.WriterAt's WriteAt signature (EB): "" for other
// functions. Applied to untraced methods only (stdCall), whether the
// receiver is a type (os.File.Read) or an interface (io.Reader.Read,
// hash.Hash.Write: whatever implements it, the contract is the same).
func ioBufEffect(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return ""
	}
	ps, rs := sig.Params(), sig.Results()
	if rs.Len() != 2 || !isBasic(rs.At(0).Type(), types.Int) || rs.At(1).Type().String() != "error" ||
		ps.Len() < 1 || !isByteSlice(ps.At(0).Type()) {
		return ""
	}
	at := ps.Len() == 2 && isBasic(ps.At(1).Type(), types.Int64)
	switch {
	case fn.Name() == "Read" && ps.Len() == 1, fn.Name() == "ReadAt" && at:
		return "0:EWB"
	case fn.Name() == "Write" && ps.Len() == 1, fn.Name() == "WriteAt" && at:
		return "0:EB"
	}
	return ""
}

// returnsIntError reports whether fn's results are exactly (int, error),
// those of rt.Fill.W, which a Read's call is wrapped in.
func returnsIntError(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Results().Len() != 2 {
		return false
	}
	rs := sig.Results()
	return types.Identical(rs.At(0).Type(), types.Typ[types.Int]) && types.Identical(rs.At(1).Type(), types.Universe.Lookup("error").Type())
}

// isBasic reports whether t's underlying type is the basic type k.
func isBasic(t types.Type, k types.BasicKind) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == k
}

// isByteSlice reports whether t is a []byte.
func isByteSlice(t types.Type) bool {
	sl, ok := t.Underlying().(*types.Slice)
	return ok && isBasic(sl.Elem(), types.Uint8)
}

// stdHooks names the rt hook of each effect.
var stdHooks = map[string]string{
	"R": "R1", "W": "W1", "D": "RDeep", "DP": "RDeepProgram", "RA": "R1Arrays", "WA": "W1Arrays", "ER": "Elems", "EB": "ElemsWords", "EW": "ElemsW", "EWB": "ElemsWordsW", "ES": "SortPre",
	"MR": "MR", "MW": "MW", "J": "RJSON", "F": "RFmt", "WB": "W1",
	"EF": "BytesFirst", "EFW": "BytesFirstW", "EL": "BytesLast", "EI": "ElemsUpTo", "O": "Fields", "IM": "RAnyMap", "DS": "RStringer",
}

// boundArg is the bound argument of a bounded effect's hook (", 10"), or "".
func (e stdEffect) boundArg() string {
	if e.bound == "" {
		return ""
	}
	return ", " + e.bound
}

// stdCall instruments the accesses the table gives for the call x, before
// its operands are instrumented (the hooks wrap the operands, outside
// their own instrumentation). Each effect's hook wraps its operand,
// rt.W(p, site, rec) returning p (or (*rt.W(&x, ...)) for a pointer
// method of an addressable x), so the operand is evaluated once, and the
// access is recorded when it is. If an operand evaluated after it calls a
// function or receives (which may synchronize, and would then fall between
// the recorded access and the call), the access is recorded after the last
// such operand instead, rt.Then(arg, rt.W(p, site, rec)), by evaluating
// the effect's operand again: only when that is pure (no call or receive)
// and on one line; otherwise the effect is not recorded. Calls in go and
// defer statements (run later) record nothing, nor do calls of std methods
// promoted through an embedded field, method values and interface calls.
func (r *rewriter) stdCall(x *ast.CallExpr) (post func()) {
	if r.noBarrier[x] {
		return nil
	}
	fn := r.calledFunc(x)
	effs := stdEffectsOf(fn)
	if effs == nil || r.traced(fn.Pkg().Path()) {
		return nil
	}
	// Operands in evaluation order: the receiver (position 0), then the
	// arguments.
	recv, ok := r.stdReceiver(x)
	if !ok {
		return nil
	}
	if x.Ellipsis.IsValid() {
		return nil // f(s...): the arguments are not the parameters
	}
	effs = expandRest(effs, len(x.Args), func(i int) bool {
		return i < len(x.Args) && r.fmtValueFormat(x.Args[i])
	})
	c := &stdCallSite{r: r, x: x, fn: fn, recv: recv, last: lastCallingOperand(r.info, recv.x, x.Args)}
	for _, e := range effs {
		c.record(e)
	}
	if c.sortSite != "" {
		r.after = append(r.after, rtAlias+".SortPost("+c.sortSite+")")
	}
	c.recordThen()
	return c.post
}

// stdRecv is the receiver operand of a std method call, and how a hook
// reaches the object it stands for.
type stdRecv struct {
	x      ast.Expr // nil: a function, or a value method's copy, read by the caller
	addr   bool     // the hook takes the receiver's address
	embed  string   // ".F.G": the embedded fields a promoted method is reached through
	viaPtr bool     // a pointer leads to the embedded field: it is on the heap
	ref    bool     // a map's or slice's value method
}

// stdReceiver returns the receiver operand of the call x, if it calls a
// method; ok is false when the method is one stdCall does not record (one
// promoted through a non-struct or an interface, or a map's or slice's
// value method promoted through an embedded field).
func (r *rewriter) stdReceiver(x *ast.CallExpr) (recv stdRecv, ok bool) {
	se, isSel := unparen(x.Fun).(*ast.SelectorExpr)
	if !isSel {
		return recv, true
	}
	sel := r.info.Selections[se]
	if sel == nil || sel.Kind() != types.MethodVal {
		return recv, true
	}
	recv.x = se.X
	recvType := typeOf(r.info, se.X)
	if len(sel.Index()) != 1 {
		var ok bool
		recv.embed, recvType, recv.viaPtr, ok = embeddedPath(recvType, sel.Index())
		if !ok {
			return recv, false
		}
	}
	if types.IsInterface(recvType) {
		// An interface's method: the hook (DS) takes the
		// interface value and finds the object it holds.
		return recv, recv.embed == ""
	}
	if isMap(recvType) || isSlice(recvType) {
		// A value method of a map or slice type (url.Values.Add,
		// sort.IntSlice.Swap): the copy refers to the same
		// elements.
		recv.ref = recv.embed == ""
		if !recv.ref {
			return recv, false
		}
	} else if !isPointer(recvType) {
		// The receiver (or its embedded field) is addressable
		// if se.X is, or if a pointer leads to it.
		if !recvIsPointer(sel) || recv.embed == "" && !r.addressable(se.X) {
			recv.x = nil // a value method gets a copy, read by the caller
		}
		recv.addr = true
	}
	return recv, true
}

// lastCallingOperand returns the position of the last operand that calls
// or receives (the receiver recv is position 0, the arguments follow), or
// -1 if none does.
func lastCallingOperand(info *types.Info, recv ast.Expr, args []ast.Expr) int {
	last := -1
	if recv != nil && containsCall(info, recv) {
		last = 0
	}
	for i, a := range args {
		if containsCall(info, a) {
			last = i + 1
		}
	}
	return last
}

// stdCallSite is the state of stdCall's instrumentation of one call: its
// receiver, the wraps left for after the operands' own instrumentation,
// and the hooks recorded after the last operand that calls.
type stdCallSite struct {
	r        *rewriter
	x        *ast.CallExpr
	fn       *types.Func // the function x calls
	recv     stdRecv
	last     int      // the position of the last operand that calls or receives
	later    []func() // wraps added by post
	then     []string // hooks recorded after operand last
	sortSite string   // an ES effect's site, once its hook is in
}

// wrap wraps e in before and after. A wrap goes around the operand's own
// instrumentation: added now for a location (whose access hook wraps the
// same node and must stay inside, addressable), after it (post) for
// anything else, which its instrumentation may replace whole (a receive,
// a hooked call), dropping wraps added before.
func (c *stdCallSite) wrap(e ast.Expr, before, after string) {
	lo, hi := c.r.span(e)
	if isLocation(e) {
		c.r.ed.wrap(lo, hi, before, after)
	} else {
		c.later = append(c.later, func() { c.r.ed.wrap(lo, hi, before, after) })
	}
}

// post adds the wraps left for after the operands' instrumentation.
func (c *stdCallSite) post() {
	for _, f := range c.later {
		f()
	}
}

// stdHook returns the hook that records the effect e on operand op (addr:
// the hook takes op's address): the table's, or a narrower one for a
// local on the stack or a slice of wide elements.
func (r *rewriter) stdHook(e stdEffect, op ast.Expr, addr bool) string {
	hook := rtAlias + "." + stdHooks[e.kind]
	if e.kind == "EB" && !narrowElems(typeOf(r.info, op)) {
		hook = rtAlias + ".Elems"
	}
	if e.kind == "EWB" && !narrowElems(typeOf(r.info, op)) {
		hook = rtAlias + ".ElemsW"
	}
	if (e.kind == "D" || e.kind == "DP") && !r.heapOperand(op, addr) {
		// A local on the stack: the slices it holds point to the
		// heap, and only their elements are recorded.
		hook = rtAlias + ".RSlicesOf"
		if e.kind == "DP" {
			hook = rtAlias + ".RSlicesOfProgram"
		}
	}
	if e.kind == "IM" && isMap(typeOf(r.info, op)) {
		hook = rtAlias + ".MR"
	}
	if (e.kind == "RA" || e.kind == "WA") && !r.heapOperand(op, addr) {
		hook = rtAlias + ".ArraysOf" // (the same: only its arrays)
	}
	return hook
}

// record instruments the effect e: its hook wraps its operand if no later
// operand calls, or else is recorded after the last one (then).
func (c *stdCallSite) record(e stdEffect) {
	r := c.r
	op, pos := c.recv.x, 0
	if e.operand >= 0 {
		if e.operand >= len(c.x.Args) {
			return
		}
		op, pos = c.x.Args[e.operand], e.operand+1
	}
	isRecv := op == c.recv.x
	if op == nil || !(r.stdOperandOK(op, e) || isRecv && c.recv.viaPtr) {
		return
	}
	if e.lenOf > 0 {
		// The bound is another argument's length, evaluated in the hook
		// before that argument is: only a pure one; else the whole.
		src, ok := "", e.lenOf-1 < len(c.x.Args)
		if ok {
			src, ok = r.reevaluable(c.x.Args[e.lenOf-1])
		}
		if ok {
			e.bound = "len(" + src + ")"
		} else {
			e.kind = "ER"
		}
	}
	if e.kind == "EI" {
		// After the call, from its result: the operand evaluated again.
		if src, ok := r.reevaluable(op); ok {
			c.wrap(c.x, rtAlias+".ElemsUpTo(", ", "+src+e.boundArg()+", "+r.withRec(r.calleeSite(c.x.Pos(), c.fn))+")")
			return
		}
		e.kind, e.bound = "ER", ""
	}
	if e.kind == "EWB" && returnsIntError(c.fn) {
		// The buffer noted where the operand is evaluated, outside its
		// own wraps (an io.Pipe's ReadBefore), and the bytes the call
		// reports written after it returns, inside the call's other
		// wraps and the hooks after its statement (its IORead): rt.Fill.
		lo, hi := r.span(op)
		xlo, xhi := r.span(c.x)
		site := r.withRec(r.calleeSite(c.x.Pos(), c.fn))
		c.later = append(c.later, func() {
			r.ed.wrapOuter(lo, hi, rtAlias+".FillW(", ", "+site+")")
			r.ed.wrapInner(xlo, xhi, rtAlias+".Filled(", ")")
		})
		return
	}
	addr := isRecv && c.recv.addr
	hook := r.stdHook(e, op, addr)
	site := func() string {
		s := r.withRec(r.calleeSite(c.x.Pos(), c.fn))
		if e.kind == "ES" {
			// SortPost names the sort by SortPre's site.
			c.sortSite = strings.TrimSuffix(s, ", "+r.recFlag())
		}
		return s
	}
	if pos >= c.last {
		c.wrapOperand(op, isRecv, addr, hook, e.boundArg()+", "+site()+")")
		return
	}
	if isRecv && c.recv.embed != "" {
		return
	}
	// A later operand calls: evaluate this one again after it.
	src, ok := r.reevaluable(op)
	if !ok {
		return
	}
	if addr {
		src = "&(" + src + ")"
	}
	c.then = append(c.then, hook+"("+src+e.boundArg()+", "+site()+")")
}

// wrapOperand wraps the operand op (isRecv: the call's receiver) in hook,
// whose remaining arguments and closing parenthesis are tail, so that the
// access is recorded where op is evaluated.
func (c *stdCallSite) wrapOperand(op ast.Expr, isRecv, addr bool, hook, tail string) {
	r := c.r
	switch {
	case isRecv && c.recv.ref && r.addressable(op):
		// Kept addressable (a BarrierPair may take its
		// address): (*rt.Then(&(x), hook(x, ...))), x evaluated
		// twice, so only when pure.
		src, ok := r.reevaluable(op)
		if !ok {
			return
		}
		c.wrap(op, "(*"+rtAlias+".Then(&(", "), "+hook+"("+src+tail+"))")
	case isRecv && c.recv.embed != "":
		// The receiver keeps its type (other wraps, a
		// BarrierPair's, may follow the embedded fields from
		// it): rt.Then(x, hook(x.F, ...)), x evaluated twice,
		// so only when pure.
		src, ok := r.reevaluable(op)
		if !ok {
			return
		}
		field := "((" + src + ")" + c.recv.embed + ")" // the embedded field
		if addr {
			field = "&" + field
		}
		if isPointer(typeOf(r.info, op)) {
			c.wrap(op, rtAlias+".Then((", "), "+hook+"("+field+tail+")")
		} else {
			// A value: Then takes its address, so that it stays
			// addressable for a pointer method.
			c.wrap(op, "(*"+rtAlias+".Then(&(", "), "+hook+"("+field+tail+"))")
		}
	case addr:
		c.wrap(op, "(*"+hook+"(&(", ")"+tail+")")
	default:
		c.wrap(op, hook+"(", tail)
	}
}

// recordThen records the hooks of then after the last operand that calls
// or receives, rt.Then(arg, hook(...)), if that operand has a single typed
// value.
func (c *stdCallSite) recordThen() {
	if len(c.then) == 0 {
		return
	}
	k := c.x.Args[c.last-1] // last > 0 here: the receiver is position 0
	if tv, ok := c.r.info.Types[k]; !ok || isUntyped(tv.Type) {
		return
	}
	if _, isTuple := typeOf(c.r.info, k).(*types.Tuple); isTuple {
		return
	}
	for _, h := range c.then {
		c.wrap(k, rtAlias+".Then(", ", "+h+")")
	}
}

// isLocation reports whether e names a location (a variable, a field,
// an element, a pointer's target): an operand whose own access hook wraps
// the same node and must stay innermost, addressable, so that another
// wrap of it goes on first.
func isLocation(e ast.Expr) bool {
	switch unparen(e).(type) {
	case *ast.Ident, *ast.SelectorExpr, *ast.IndexExpr, *ast.StarExpr:
		return true
	}
	return false
}

// reevaluable returns op's source if the rewriter may write it a second
// time to evaluate it again: no call or receive, no function literal, one
// line.
func (r *rewriter) reevaluable(op ast.Expr) (string, bool) {
	lo, hi := r.span(op)
	src := string(r.ed.src[lo:hi])
	if containsCall(r.info, op) || strings.ContainsAny(src, "\n") || hasFuncLit(op) {
		return "", false
	}
	return src, true
}

// embeddedPath follows the embedded fields that index (a method
// selection's, the method last) goes through from a receiver of type t:
// their names as a selector suffix (".Buffer"), the type of the last one,
// on which the method is declared, and whether a pointer leads to it (t
// or a field on the way). ok is false when a field on the way is not a
// struct's, or the last one is an interface.
func embeddedPath(t types.Type, index []int) (path string, last types.Type, viaPtr, ok bool) {
	for _, i := range index[:len(index)-1] {
		if p, isPtr := core(t).(*types.Pointer); isPtr {
			t = p.Elem()
			viaPtr = true
		}
		st, isStruct := core(t).(*types.Struct)
		if !isStruct || i >= st.NumFields() {
			return "", nil, false, false
		}
		f := st.Field(i)
		path += "." + f.Name()
		t = f.Type()
	}
	if _, isIface := core(t).(*types.Interface); isIface {
		return "", nil, false, false
	}
	return path, t, viaPtr, true
}

// stdOperandOK reports whether the effect e can wrap operand op: a pointer
// (or an addressable receiver) for R, W and D, a slice for ER and EW, a map
// for MR and MW, a typed value for J; never a constant or nil.
func (r *rewriter) stdOperandOK(op ast.Expr, e stdEffect) bool {
	switch u := unparen(op).(type) {
	case *ast.CompositeLit:
		return false // a new object: no other goroutine has it
	case *ast.UnaryExpr:
		if _, lit := unparen(u.X).(*ast.CompositeLit); lit && u.Op == token.AND {
			return false
		}
	}
	// A receiver's address is taken, unless it is a pointer, a map or a
	// slice (the object or the elements are elsewhere, whatever holds the
	// value: b.WriteString(s) on a parameter b *strings.Builder was not
	// recorded).
	t := typeOf(r.info, op)
	recvAddr := e.operand < 0 && !isPointer(t) && !isMap(t) && !isSlice(t)
	if !r.heapOperand(op, recvAddr) && e.kind != "D" && e.kind != "DP" && e.kind != "RA" && e.kind != "WA" && e.kind != "DS" {
		return false
	}
	tv, ok := r.info.Types[op]
	if !ok || tv.Value != nil || tv.IsNil() || isUntyped(tv.Type) {
		return false
	}
	if _, isTuple := tv.Type.(*types.Tuple); isTuple {
		return false
	}
	switch e.kind {
	case "EF", "EFW", "EL":
		return isByteSlice(tv.Type)
	case "ER", "EW", "EB", "EWB", "ES", "EI":
		_, ok := core(tv.Type).(*types.Slice)
		return ok
	case "MR", "MW":
		return isMap(tv.Type)
	case "IM":
		return isMap(tv.Type) || types.IsInterface(tv.Type)
	case "DS":
		return types.IsInterface(tv.Type)
	case "J":
		return true
	case "F":
		return reachesShared(tv.Type, 0)
	case "WB":
		p, ok := types.Unalias(tv.Type).(*types.Pointer)
		if !ok {
			return false
		}
		n, ok := types.Unalias(p.Elem()).(*types.Named)
		if !ok || n.Obj().Pkg() == nil {
			return false
		}
		return unsyncWriters[n.Obj().Pkg().Path()+"."+n.Obj().Name()]
	}
	return e.operand < 0 || isPointer(tv.Type)
}

// reachesShared reports whether a value of type t may lead fmt to memory
// other than its own copy (a pointer, slice, map or interface inside it):
// otherwise rt.RFmt would read nothing.
func reachesShared(t types.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch u := core(t).(type) {
	case *types.Basic:
		return false
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if reachesShared(u.Field(i).Type(), depth+1) {
				return true
			}
		}
		return false
	case *types.Array:
		return reachesShared(u.Elem(), depth+1)
	case *types.Chan, *types.Signature:
		return false // printed as an address
	}
	return true
}

// narrowElems reports whether t is a slice of pointer-free elements
// narrower than a word (bytes, runes), read by ElemsWords.
func narrowElems(t types.Type) bool {
	sl, ok := core(t).(*types.Slice)
	if !ok {
		return false
	}
	b, ok := sl.Elem().Underlying().(*types.Basic)
	if !ok {
		return false
	}
	switch b.Kind() {
	case types.Int8, types.Uint8, types.Int16, types.Uint16, types.Int32, types.Uint32, types.Float32, types.Bool:
		return true
	}
	return false
}

// heapOperand reports whether the object an operand names may be shared:
// not a local variable (or a part of one) that no function literal
// captures. Such a variable whose address only a std call takes stays on
// its goroutine's stack, which moves when it grows, maybe onto the memory
// of a dead goroutine's stack, whose old accesses at those addresses
// would then race with its new ones (rt.Alloc records the address the
// variable had when declared). A captured variable is on the heap when a
// goroutine's literal captures it, which is how another goroutine reaches
// it. recvAddr: op is a receiver whose address the method takes.
func (r *rewriter) heapOperand(op ast.Expr, recvAddr bool) bool {
	var v *types.Var
	if recvAddr {
		v = rootVar(op, r.info)
	} else if u, ok := unparen(op).(*ast.UnaryExpr); ok && u.Op == token.AND {
		v = rootVar(u.X, r.info)
	}
	if v == nil || isPackageVar(v) {
		return true
	}
	if r.captured == nil {
		r.captured = capturedLocals(r.in.File, r.info)
	}
	return r.captured[v]
}

// capturedLocals returns the local variables that a function literal
// refers to and does not declare.
func capturedLocals(f *ast.File, info *types.Info) map[*types.Var]bool {
	m := map[*types.Var]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok {
			return true
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok && !v.IsField() && !isPackageVar(v) &&
					(v.Pos() < lit.Pos() || v.Pos() >= lit.End()) {
					m[v] = true
				}
			}
			return true
		})
		return true
	})
	return m
}

// unsyncWriters are the io.Writers whose Write writes the object and
// nothing else (WB).
var unsyncWriters = map[string]bool{"bytes.Buffer": true, "strings.Builder": true, "bufio.Writer": true}

// hasFuncLit reports whether e contains a function literal.
func hasFuncLit(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			found = true
		}
		return !found
	})
	return found
}
