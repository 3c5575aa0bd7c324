package p

/*
#include <stdlib.h>
static int add(int a, int b) { return a + b; }
typedef struct { int v; } box;
*/
import "C"

import "unsafe"

var total int

// C's names and values stay as written; the Go variables around them
// are traced.
func add(a, b int) int {
	total += int(C.add(C.int(a), C.int(b))) // the write of total only
	var sum C.int
	sum = C.add(C.int(a), 1)
	total = int(sum)
	cs := C.CString("x")
	defer C.free(unsafe.Pointer(cs))
	return total
}

// A Go type with a field of a C type: its Go fields are traced.
type box struct {
	b    C.box
	hits int
}

func (x *box) get() int {
	x.hits++
	x.b.v = C.int(x.hits)
	return int(x.b.v)
}

func spawn(x *box) {
	go func() { x.hits = 1 }()
	go x.get()
}

// A Go field or variable of a C type is Go memory: recorded, with the
// generic hooks (the size is the compiled type's).
type conn struct {
	db   *C.box
	last C.box
}

var shared C.int

func (c *conn) close() {
	if c.db != nil {
		c.last = *c.db
		c.db = nil
		shared++
	}
}
