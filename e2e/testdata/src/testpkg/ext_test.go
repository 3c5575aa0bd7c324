package testpkg_test

import (
	"testing"

	"racekit.test/e2e/testpkg"
)

func TestExternal(t *testing.T) {
	testpkg.Reset()
	testpkg.Inc("z")
}

func ExampleGet() {
	testpkg.Reset()
	testpkg.Inc("k")
	println(testpkg.Get("k"))
	// Output:
}
