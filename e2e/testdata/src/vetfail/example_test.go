package vetfail

import "fmt"

func ExampleRetry() {
	Retry(func() error { return nil })
	fmt.Println("done")
	// Output: done
}

// The tests check: RetryContext is not declared.
func ExampleRetryContext() {
	fmt.Println("done")
	// Output: done
}
