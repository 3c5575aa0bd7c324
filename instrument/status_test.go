package instrument

import "testing"

func TestStatus(t *testing.T) {
	var nilStatus *Status
	nilStatus.set("x", 3) // ignored
	nilStatus.add(1)
	if s := nilStatus.String(); s != "" {
		t.Errorf("nil: %q", s)
	}
	var s Status
	if got := s.String(); got != "" {
		t.Errorf("before a step: %q", got)
	}
	s.set("listing packages", 0)
	if got := s.String(); got != "listing packages" {
		t.Errorf("a step without units: %q", got)
	}
	s.set("instrumenting packages", 4)
	s.add(1)
	s.add(2)
	if got := s.String(); got != "instrumenting packages: 3 of 4 done" {
		t.Errorf("a step with units: %q", got)
	}
	s.set("compiling", 0)
	if got := s.String(); got != "compiling" {
		t.Errorf("the next step: %q", got)
	}
}
