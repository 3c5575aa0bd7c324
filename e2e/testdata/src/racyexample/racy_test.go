package racyexample

import (
	"fmt"
	"testing"
)

func TestFirst(t *testing.T) {}

func TestRacy(t *testing.T) { Twice() }

func ExampleTwice() {
	fmt.Println("quiet")
	// Output: quiet
}

func ExampleSum() {
	Sum()
	fmt.Println("summed")
	// Output: summed
}
