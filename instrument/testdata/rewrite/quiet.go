package p

import (
	"fmt"
	"math"
	"strings"
)

// Quiet: nothing recorded inside, so no Enter and Leave (quiet.go).

type vec struct{ x, y, z float64 }

func (a vec) add(b vec) vec       { return vec{a.x + b.x, a.y + b.y, a.z + b.z} }
func (a vec) scale(s float64) vec { return vec{a.x * s, a.y * s, a.z * s} }
func (a vec) dot(b vec) float64   { return a.x*b.x + a.y*b.y + a.z*b.z }

// Calls of quiet functions of the file and of math with plain values.
func (a vec) norm() vec { return a.scale(1 / math.Sqrt(a.dot(a))) }

// Mutual recursion of quiet functions stays quiet.
func even(n int) bool {
	if n == 0 {
		return true
	}
	return odd(n - 1)
}

func odd(n int) bool { return n != 0 && even(n-1) }

// A string is a plain value.
func shout(s string) string { return strings.ToUpper(s) + "!" }

// Not quiet: each has something rt records or may call traced code.

var total float64

func addTotal(v vec) { total += v.x } // a package variable

func callsLoud(v vec) float64 { addTotal(v); return v.x } // a function that is not quiet

func interfaceArg(v vec) string { return fmt.Sprint(v) } // fmt may call v's String method

func funcValue(f func(int) int) int { return f(1) } // a func value: traced code

type shape interface{ area() float64 }

func viaInterface(s shape) float64 { return s.area() }

func literal() func() int { return func() int { return 1 } }

func recv(c chan int) int { return <-c }

func deferred() { defer fmt.Println() }

func mapArg(m map[string]int) int { return len(m) } // a map parameter: len reads no element

func strMap(s string) string { return strings.Map(func(r rune) rune { return r }, s) }

// A quiet literal, and one calling a function of the file (kept).
func lits() (func(int, int) float64, func(vec) float64) {
	return func(i, j int) float64 { return float64(i + j) }, func(v vec) float64 { return v.dot(v) }
}

// A quiet literal started by a go statement.
func goQuiet() {
	go func(n int) { _ = n * 2 }(3)
}
