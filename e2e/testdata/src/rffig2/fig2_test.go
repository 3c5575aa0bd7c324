package rffig2

import "testing"

func TestFigure2Len5(t *testing.T)   { Run(5) }
func TestFigure2Len50(t *testing.T)  { Run(50) }
func TestFigure2Len500(t *testing.T) { Run(500) }

func TestFigure2GuardedLen50(t *testing.T) { RunGuarded(50) }
