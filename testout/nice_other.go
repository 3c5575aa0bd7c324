//go:build !linux

package testout

// yieldToTests does nothing where a thread's priority cannot be set alone
// (see nice_linux.go).
func yieldToTests() {}
