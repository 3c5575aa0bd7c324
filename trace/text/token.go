package text

import (
	"strconv"
)

// Object IDs the readers give named objects: from firstObjID up in steps of
// objIDStep, like word addresses, skipping IDs already in use. They match
// trace.Builder's, so a parsed trace compares equal to a built one.
const (
	firstObjID = 0x1000
	objIDStep  = 8
)

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func trimLeft(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func trimSpace(b []byte) []byte { return trimRight(trimLeft(b)) }

// hexLiteral reports whether b is a canonical object-ID literal of racekit
// text: "0x" and 1 to 16 lowercase hex digits without leading zeros. Only
// canonical spellings are literals, so that two different tokens never
// denote one object; anything else ("0X1F", "0x01") is an ordinary name.
func hexLiteral(b []byte) (uint64, bool) {
	if len(b) < 3 || len(b) > 18 || b[0] != '0' || b[1] != 'x' || (b[2] == '0' && len(b) > 3) {
		return 0, false
	}
	var v uint64
	for _, c := range b[2:] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// parseUint parses a decimal or 0x-hex (either case) uint64 without
// allocating.
func parseUint(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
		var v uint64
		for _, c := range b {
			var d byte
			switch {
			case '0' <= c && c <= '9':
				d = c - '0'
			case 'a' <= c && c <= 'f':
				d = c - 'a' + 10
			case 'A' <= c && c <= 'F':
				d = c - 'A' + 10
			default:
				return 0, false
			}
			if v>>60 != 0 {
				return 0, false
			}
			v = v<<4 | uint64(d)
		}
		return v, true
	}
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// appendValue writes a value the canonical way: decimal below 0x10000,
// hex above (large values are mostly pointers).
func appendValue(b []byte, v uint64) []byte {
	if v < 0x10000 {
		return strconv.AppendUint(b, v, 10)
	}
	return strconv.AppendUint(append(b, "0x"...), v, 16)
}

func appendHex(b []byte, v uint64) []byte {
	return strconv.AppendUint(append(b, "0x"...), v, 16)
}

// stdSafe reports whether s can be written as an STD token that RAPID and
// racekit's STD reader both read back as s: no structure characters, no
// whitespace or control characters, no '=' (racekit reads r(x=5) as a
// value), and no leading '#' or '"' (racekit reads those as a comment or a
// quoted string).
func stdSafe(s string) bool {
	if s == "" || s[0] == '#' || s[0] == '"' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '|' || c == '(' || c == ')' || c == '=' {
			return false
		}
	}
	return true
}

// bareSafe reports whether s can be written unquoted in racekit text in any
// position (thread, decor, location, directive argument).
func bareSafe(s string) bool {
	if !stdSafe(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ';', ',', '"':
			return false
		}
	}
	return true
}

// render returns s as a racekit text token: bare when that reads back as
// s, else a Go quoted string.
func render(s string) string {
	if bareSafe(s) {
		return s
	}
	return strconv.Quote(s)
}

// renderObj is render for an object's name token, which must not read
// back as an ID literal.
func renderObj(s string) string {
	if _, lit := hexLiteral([]byte(s)); lit || !bareSafe(s) {
		return strconv.Quote(s)
	}
	return s
}

// unique returns base, or base~2, base~3, ... whichever is not in used.
func unique(base string, used map[string]struct{}) string {
	if _, ok := used[base]; !ok {
		return base
	}
	for n := 2; ; n++ {
		c := base + "~" + strconv.Itoa(n)
		if _, ok := used[c]; !ok {
			return c
		}
	}
}
