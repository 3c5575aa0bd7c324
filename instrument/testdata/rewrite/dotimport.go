package p

import . "bufio"

// A traced variadic call whose element type comes from a dot import: the
// slice literal written out names it bare (Scanner, not .Scanner).
func configure(opts ...func(*Scanner)) int { return len(opts) }

func use() int {
	return configure(func(s *Scanner) { s.Buffer(nil, 1) })
}
