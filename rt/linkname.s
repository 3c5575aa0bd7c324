// This file lets package rt declare functions without bodies, which
// go:linkname binds (clock.go's nanotime) on every architecture.
