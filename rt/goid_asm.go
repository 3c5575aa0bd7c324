//go:build amd64 || arm64

package rt

import "unsafe"

// getg returns the current goroutine's runtime g.
func getg() unsafe.Pointer

const haveGetg = true
