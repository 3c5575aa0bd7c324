package text

import (
	"encoding/binary"
	"math/bits"
)

// tokenTable maps the tokens of one namespace (threads, objects or
// location labels) to what they denote. A token, once put, keeps its value.
//
// Most tokens of real traces are a short prefix and a number: RAPID writes
// V123, L4, T7 and integer locations. Those are kept in a slice per prefix,
// indexed by the number, which costs one array access instead of hashing
// and comparing a string in a map that no longer fits in cache (a trace of
// 50M events has a lot of names). Every other token, and a number too far
// beyond its slice's end to grow it, goes to a map. A token is stored in
// exactly one of the two, and looked up in both.
//
// In front of both sits a small direct-mapped cache keyed by the token's
// length and its first, middle and last 8 bytes, which for a token of up
// to 24 bytes is the whole token: the few hundred tokens a stretch of trace
// uses over and over (its threads, hot variables, and locations, which
// repeat heavily per thread) are found with a few loads and compares,
// without hashing the token or walking a map.
type tokenTable[V any] struct {
	cache  *[cacheSize]cacheEntry[V]
	byName map[string]named[V]
	nums   []numTable[V]
}

// named is a map entry; it keeps the key so that the cache can hold a long
// token's string without allocating it again.
type named[V any] struct {
	key string
	v   V
}

type numTable[V any] struct {
	prefix uint64 // the prefix's bytes, packed by splitNum
	vals   []numEntry[V]
}

type numEntry[V any] struct {
	v  V
	ok bool
}

// cacheEntry holds one token: its key, and the token itself when the key
// does not cover it (see key.whole). A zero entry matches no key.
type cacheEntry[V any] struct {
	k    key
	long string
	v    V
}

// key is a token's length plus one (so that it is never zero) and its
// bytes 0-7, 8-15 and its last 8 bytes, each zero-padded (and zero when
// the token is too short to reach them).
type key struct {
	k0, k1, k2 uint64
	n          int
}

const (
	maxNumPrefixes = 16
	maxNumPrefix   = 7 // bytes: the prefix and its length pack into a uint64
	maxNumDigits   = 9
	numSlack       = 4096 // how far beyond its end a slice may grow at once

	cacheBits = 9
	cacheSize = 1 << cacheBits
	// maxKeyed is the longest token that a key holds whole.
	maxKeyed = 24
)

func newTokenTable[V any]() tokenTable[V] {
	return tokenTable[V]{cache: new([cacheSize]cacheEntry[V]), byName: make(map[string]named[V])}
}

// load8 returns the first n bytes of b (n <= 8, n <= len(b)), zero-padded.
// A token of the read buffer is followed by at least 8 bytes of capacity
// (see reader.buf): then this is one 8-byte load, masked.
func load8(b []byte, n int) uint64 {
	if n == 8 {
		return binary.LittleEndian.Uint64(b)
	}
	if cap(b) >= 8 {
		return binary.LittleEndian.Uint64(b[:8]) & (1<<(8*uint(n)) - 1)
	}
	var x uint64
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// keyOf returns tok's key.
func keyOf(tok []byte) key {
	n := len(tok)
	switch {
	case n <= 8:
		return key{k0: load8(tok, n), n: n + 1}
	case n <= 16:
		return key{k0: binary.LittleEndian.Uint64(tok), k2: binary.LittleEndian.Uint64(tok[n-8:]), n: n + 1}
	}
	return key{binary.LittleEndian.Uint64(tok), binary.LittleEndian.Uint64(tok[8:]), binary.LittleEndian.Uint64(tok[n-8:]), n + 1}
}

// whole reports whether the key is the whole token.
func (k key) whole() bool { return k.n <= maxKeyed+1 }

func (k key) index() uint64 {
	h := (k.k0 ^ bits.RotateLeft64(k.k1, 21) ^ bits.RotateLeft64(k.k2, 42) ^ uint64(k.n)) * 0x9e3779b97f4a7c15
	return h >> (64 - cacheBits)
}

// hasByte reports whether the key's words hold byte c (beyond the padding:
// c is not 0). For a whole key that is whether the token holds c.
func (k key) hasByte(c byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	p := lo * uint64(c)
	v0, v1, v2 := k.k0^p, k.k1^p, k.k2^p
	// (v - lo) & ^v & hi is nonzero if and only if v has a zero byte.
	return ((v0-lo)&^v0|(v1-lo)&^v1|(v2-lo)&^v2)&hi != 0
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
func (t *tokenTable[V]) get(tok []byte) (V, bool) { return t.getKey(tok, keyOf(tok)) }

// getKey is get with tok's key.
func (t *tokenTable[V]) getKey(tok []byte, k key) (V, bool) {
	c := &t.cache[k.index()]
	if c.k == k && (k.whole() || c.long == string(tok)) {
		return c.v, true
	}
	return t.getSlow(tok, k, c)
}

// getSlow looks tok up in the tables and caches what it finds in c.
func (t *tokenTable[V]) getSlow(tok []byte, k key, c *cacheEntry[V]) (V, bool) {
	if p, n, ok := splitNum(tok); ok {
		if nt := t.numTable(p); nt != nil && n < len(nt.vals) && nt.vals[n].ok {
			// A number token has at most maxNumPrefix+maxNumDigits bytes:
			// its key is whole.
			v := nt.vals[n].v
			*c = cacheEntry[V]{k: k, v: v}
			return v, true
		}
	}
	e, ok := t.byName[string(tok)]
	if ok {
		*c = cacheEntry[V]{k: k, v: e.v}
		if !k.whole() {
			c.long = e.key
		}
	}
	return e.v, ok
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
	t.byName[tok] = named[V]{tok, v}
}
