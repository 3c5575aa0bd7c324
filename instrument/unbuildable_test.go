package instrument

import (
	"reflect"
	"testing"
)

// go build's output names each package it could not compile in a "# "
// header; only the dependencies among them are left untraced, each with
// its first error.
func TestFailedPackages(t *testing.T) {
	out := `# example.com/dep/codec
/mod/example.com/dep/codec/helper.go:1486:158: cannot use _rk18 (variable of type int) as byte value in assignment
/mod/example.com/dep/codec/helper.go:1490:2: too many errors
# example.com/m
./m.go:3:2: undefined: x
# example.com/dep/util [example.com/dep/util.test]
/mod/example.com/dep/util/u.go:9:1: missing return
`
	got := failedPackages(out, []string{"example.com/dep/codec", "example.com/dep/util", "example.com/dep/ok"})
	want := []Skip{
		{"example.com/dep/codec", "/mod/example.com/dep/codec/helper.go:1486:158: cannot use _rk18 (variable of type int) as byte value in assignment"},
		{"example.com/dep/util", "/mod/example.com/dep/util/u.go:9:1: missing return"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got := failedPackages("go: downloading example.com/x v1.0.0\n", []string{"example.com/dep/codec"}); got != nil {
		t.Errorf("no header: failed %q", got)
	}
}
