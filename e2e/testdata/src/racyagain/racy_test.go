package racyagain

import "testing"

func TestRacyA(t *testing.T) { Race() }

func TestCalm(t *testing.T) {}

func TestRacyB(t *testing.T) { Race() }
