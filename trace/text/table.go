package text

// tokenTable maps the tokens of one namespace (threads, objects or
// location labels) to what they denote.
//
// Most tokens of real traces are a short prefix and a number: RAPID writes
// V123, L4, T7 and integer locations. Those are kept in a slice per prefix,
// indexed by the number, which costs one array access instead of hashing
// and comparing a string in a map that no longer fits in cache (a trace of
// 50M events has a lot of names). Every other token, and a number too far
// beyond its slice's end to grow it, goes to a map. A token is stored in
// exactly one of the two, and looked up in both.
type tokenTable[V any] struct {
	byName map[string]V
	nums   []numTable[V]
}

type numTable[V any] struct {
	prefix uint64 // the prefix's bytes, packed by splitNum
	vals   []numEntry[V]
}

type numEntry[V any] struct {
	v  V
	ok bool
}

const (
	maxNumPrefixes = 16
	maxNumPrefix   = 7 // bytes: the prefix and its length pack into a uint64
	maxNumDigits   = 9
	numSlack       = 4096 // how far beyond its end a slice may grow at once
)

func newTokenTable[V any]() tokenTable[V] {
	return tokenTable[V]{byName: make(map[string]V)}
}

// splitNum splits tok into a prefix of at most maxNumPrefix non-digits,
// packed with its length into a uint64, and a canonical decimal number (no
// leading zeros) of at most maxNumDigits digits, in one pass.
func splitNum(tok []byte) (prefix uint64, n int, ok bool) {
	i := 0
	for ; i < len(tok); i++ {
		c := tok[i]
		if '0' <= c && c <= '9' {
			break
		}
		if i == maxNumPrefix {
			return 0, 0, false
		}
		prefix |= uint64(c) << (8 * i)
	}
	digits := len(tok) - i
	if digits == 0 || digits > maxNumDigits || (tok[i] == '0' && digits > 1) {
		return 0, 0, false
	}
	for _, c := range tok[i:] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + int(c-'0')
	}
	return prefix | uint64(i)<<56, n, true
}

func (t *tokenTable[V]) numTable(prefix uint64) *numTable[V] {
	for i := range t.nums {
		if t.nums[i].prefix == prefix {
			return &t.nums[i]
		}
	}
	return nil
}

// get looks tok up without allocating.
func (t *tokenTable[V]) get(tok []byte) (V, bool) {
	if p, n, ok := splitNum(tok); ok {
		if nt := t.numTable(p); nt != nil && n < len(nt.vals) && nt.vals[n].ok {
			return nt.vals[n].v, true
		}
	}
	v, ok := t.byName[string(tok)]
	return v, ok
}

// put stores tok, which get has not found.
func (t *tokenTable[V]) put(tok string, v V) {
	if p, n, ok := splitNum([]byte(tok)); ok {
		nt := t.numTable(p)
		if nt == nil && len(t.nums) < maxNumPrefixes {
			t.nums = append(t.nums, numTable[V]{prefix: p})
			nt = &t.nums[len(t.nums)-1]
		}
		if nt != nil && n < len(nt.vals)+numSlack {
			for len(nt.vals) <= n {
				nt.vals = append(nt.vals, numEntry[V]{})
			}
			nt.vals[n] = numEntry[V]{v, true}
			return
		}
	}
	t.byName[tok] = v
}
