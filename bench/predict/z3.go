//go:build z3 && cgo

package main

import "github.com/racekit/racekit/solver"

func init() { z3Backend = func() solver.Backend { return solver.NewZ3() } }
