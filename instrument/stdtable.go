package instrument

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
	// bytes.Equal compares as strings, whose reads go test -race sees.
	// Nothing for Compare, IndexByte and Count of one byte, which run in
	// assembly (internal/bytealg) that -race does not see (held-out
	// blevesearch/bleve: a treap's bytes.Compare of a key its owner then
	// reused was a race under racekit only). Index and Contains search an
	// operand of at most 64 bytes, or for one byte, in assembly too; a
	// longer one in Go code, whose reads -race sees (EIL, ERL: s up to
	// the match, or all of it, only then).
	{"0:ER 1:ER", pre("bytes.", "Equal")},
	{"", pre("bytes.", "Compare", "IndexByte", "Count")}, // not modref's summary of their Go code either
	{"0:EIL@1", pre("bytes.", "Index")},
	{"0:ERL@1", pre("bytes.", "Contains")},
	// Their match is one rune: at most utf8.UTFMax bytes past its index,
	// all of them counted (fewer than before, the whole operand). A call
	// of IndexRune, ContainsRune, IndexAny or ContainsAny whose rune or
	// characters are a constant ASCII one searches with IndexByte, and
	// records nothing (stdcalls.go's asmRuneSearch: a constant argument is
	// not something an entry can say).
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
