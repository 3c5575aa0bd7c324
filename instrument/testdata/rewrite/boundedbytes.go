package p

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

type queue struct{ array []byte }

// Each call records the bytes it may touch at the start or the end of the
// buffer, not the whole tail it is given.
func (q *queue) peek(i int) (uint64, rune, rune) {
	v, _ := binary.Uvarint(q.array[i:])
	binary.PutUvarint(q.array[i:], v+1)
	r, _ := utf8.DecodeRune(q.array[i:])
	l, _ := utf8.DecodeLastRune(q.array[:i])
	utf8.EncodeRune(q.array[i:], r)
	return v, r, l
}

var closeComment = []byte("-->")

// HasPrefix and HasSuffix read as many bytes of the tail as the prefix
// or suffix has, when that can be evaluated again; a prefix made by a
// call: the whole tail.
func (q *queue) closes(i int) bool {
	return bytes.HasPrefix(q.array[i:], closeComment) || bytes.HasSuffix(q.array[:i], closeComment) ||
		bytes.HasPrefix(q.array[i:], bytes.TrimSpace(closeComment))
}

// IndexByte reads in assembly, which go test -race does not see: nothing.
// Index reads the tail up to the match it returns (the separator
// included), all of it when there is none, when the tail is longer than
// its assembly searches (ElemsUpToLong): recorded after the call from its
// result, the tail evaluated again; a tail made by a call: the whole of
// it, before, when long (ElemsLong), as for Contains.
func (q *queue) next(i int) int {
	j := bytes.IndexByte(q.array[i:], '"')
	k := bytes.Index(q.array[i:], closeComment)
	l := bytes.Index(bytes.TrimSpace(q.array), closeComment)
	if bytes.Contains(q.array, closeComment) {
		l++
	}
	return j + k + l + bytes.IndexByte(bytes.TrimSpace(q.array), ' ')
}

// A rune's match: up to four bytes past its index. An ASCII rune, or one
// ASCII character for IndexAny, constant: IndexByte's assembly, nothing.
func (q *queue) rune(i int) int {
	n := bytes.IndexRune(q.array[i:], 'é') + bytes.IndexAny(q.array[i:], "ab")
	if bytes.ContainsRune(q.array, ',') || bytes.ContainsAny(q.array, ";") {
		n++
	}
	return n + bytes.IndexRune(q.array[i:], ' ') + bytes.IndexAny(q.array[i:], "a")
}
