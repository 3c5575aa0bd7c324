// Code from dependencies whose instrumented copies did not compile (gin's
// dependencies, corpus batch J): each case below is one of them.
package p

import (
	"io/ioutil"
	"log"
	"os"
	"reflect"
)

// github.com/modern-go/concurrent's loggers.
var ErrorLogger = log.New(os.Stderr, "", 0)

type internerMap map[string]string

// github.com/ugorji/go/codec: s, ok := assigns the named result s.
func (x internerMap) string(v []byte) (s string) {
	s, ok := x[string(v)]
	if !ok {
		s = string(v)
		x[s] = s
	}
	return
}

type Index string

type FullName string

// golang.org/x/text, google.golang.org/protobuf: copy and append of a
// named string type.
func strs(dst []byte, l Index, prefix FullName) []byte {
	copy(dst, l[:3])
	return append(dst, prefix...)
}

// A hooked reflect call.
func onlyReflect(t reflect.Type) any { return reflect.New(t) }

// InfoLogger is used to print informational message, default to off
var InfoLogger = log.New(ioutil.Discard, "", 0)
