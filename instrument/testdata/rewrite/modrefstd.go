// Calls of std functions outside the hand-written table take their
// effects from modref_table.go (package modref's summaries): the map of a
// url.Values receiver written by Add (the receiver kept addressable: it is
// evaluated again inside rt.Then), hex.Encode's dst written and src read
// element by element, strings.Join's elements read; Sscanf writes what its
// operands point to; io.Copy into a bytes.Buffer writes it. A
// strings.Replacer synchronizes (a Once): nothing. Println of a call with
// two results: the I/O event goes through the function value.
package p

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"
)

var r = strings.NewReplacer("a", "b")

func modref(v url.Values, dst, src []byte, parts []string, rd io.Reader) string {
	v.Add("k", "1")
	hex.Encode(dst, src)
	var n int
	fmt.Sscanf("1", "%d", &n)
	var b bytes.Buffer
	go func() { io.Copy(&b, rd) }()
	_ = r.Replace("aa")
	fmt.Println(two())
	return strings.Join(parts, ",")
}

func two() (int, error) { return 1, nil }
