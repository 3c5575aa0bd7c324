package p

import (
	"context"
	"net/http"
)

// A call into untraced code that takes a context (or an *http.Request,
// which carries one) and can fail is followed by rt.CtxSeen: the callee
// may have returned because of the cancel, whose cause it hands back.
// Not when the context is not a plain expression (it would be evaluated
// again), not when the statement declares its name anew, not for a call
// that cannot fail.
func ctxSeen(ctx context.Context, req *http.Request, c *http.Client) error {
	if _, err := http.DefaultTransport.RoundTrip(req); err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	_, err = http.NewRequestWithContext(ctx, http.MethodGet, "http://x/", nil)
	_, err = http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, "http://x/", nil)
	ctx2 := context.WithoutCancel(ctx)
	_ = ctx2
	{
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://x/", nil)
		_, _ = req, err
	}
	{
		// After this statement req is the response: no CtxSeen.
		req, err := c.Do(req)
		_, _ = req, err
	}
	return context.Cause(ctx)
}
