package pecanfig1

import "testing"

func TestFigure1(t *testing.T) { Run() }
