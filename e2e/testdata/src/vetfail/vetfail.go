// Package vetfail fails go test's vet check, not its build: its example
// names a function the package does not have (e2e.TestTestVet).
package vetfail

// Retry calls f until it returns nil.
func Retry(f func() error) {
	for f() != nil {
	}
}
