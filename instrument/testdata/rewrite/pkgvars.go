package p

type testCase struct {
	original string
	expected [][]rune
}

// Tables in package-level vars stay as written: the compiler lays out a
// literal of constants statically, where a call at any level of it makes
// the whole of it code in init (rivo/uniseg's thousands of test cases).
var cases = []testCase{
	{original: "ab", expected: [][]rune{{'a', 'b'}}},
	{original: "a b", expected: [][]rune{{'a', ' '}, {'b'}}},
}

var ranges = [][4]int{{0, 8, 1, 2}, {9, 9, 3, 4}}

var byName = map[string][]int{"a": {1, 2}}

var first = &testCase{original: "x"}

// A function literal's body runs at each call: its literals allocate.
var build = func() []testCase {
	return []testCase{{original: "y", expected: [][]rune{{'y'}}}}
}
