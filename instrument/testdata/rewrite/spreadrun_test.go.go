package p

import (
	"fmt"
	"testing"
)

// t.Run and b.Run of a call's two results (held-out typeid's
// b.Run(benchUntypedString(8))).
func named(name string) (string, func(*testing.T)) {
	return name, func(t *testing.T) { t.Log(name) }
}

func benchNamed(n int) (string, func(*testing.B)) {
	return fmt.Sprint(n), func(b *testing.B) {}
}

func other() (string, func(*testing.T)) { return "x", helper }

func helper(t *testing.T) {}

func TestSpread(t *testing.T) {
	t.Run(named("a"))
	if !t.Run(other()) {
		t.Fail()
	}
	defer t.Run(named("deferred"))
	go t.Run(named("go"))
}

func BenchmarkSpread(b *testing.B) {
	b.Run(benchNamed(1))
}
