package exampleexit

import (
	"fmt"
	"testing"
)

func TestLate(t *testing.T) { Late() }

func ExampleLate() {
	fmt.Println("started")
	// Output: started
}
