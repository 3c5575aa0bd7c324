//go:build go1.24

package rttest

import (
	"context"
	"testing"
)

// Context is t.Context().
func Context(tb testing.TB, site uint32) context.Context {
	if n := lookup(tb); n != nil {
		n.ctx.Store(true)
	}
	return tb.Context()
}
