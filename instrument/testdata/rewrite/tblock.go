package p

import "testing"

// testify's interfaces: calls through them are bracketed (rttest checks
// the dynamic type).
type TestingT interface {
	Errorf(format string, args ...interface{})
}

type tHelper interface{ Helper() }

// logger has a Logf of its own: not bracketed (a concrete method).
type logger struct{}

func (logger) Logf(format string, args ...any) {}

// wrapper embeds the test: its promoted methods are bracketed.
type wrapper struct{ *testing.T }

type holder struct{ t *testing.T }

func assertTrue(t TestingT, ok bool) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !ok {
		t.Errorf("want %v", ok)
	}
	return ok
}

func calls(t *testing.T, tb testing.TB, w wrapper, h *holder, l logger) {
	t.Log("a")
	tb.Logf("%d", 1)
	w.Helper()
	h.t.Fail()
	l.Logf("not a test")
	if t.Failed() || tb.Skipped() {
		return
	}
	get(t).Log("receiver with a call: not bracketed")
	defer t.Log("deferred: not bracketed")
	_ = t.Name()
}

func get(t *testing.T) *testing.T { return t }
