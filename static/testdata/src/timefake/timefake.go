// Package timefake stands in for time in tests: export_test.go registers
// AfterFunc as a timer callback (its function runs later on a goroutine
// of its own).
package timefake

type Timer struct{ f func() }

func AfterFunc(d int, f func()) *Timer { return &Timer{f: f} }
