// Command racekit-vet is the RELAY static race analyzer (package
// github.com/racekit/racekit/static) as a vet tool:
//
//	go build -o racekit-vet ./cmd/racekit-vet
//	go vet -vettool=$(pwd)/racekit-vet ./...
//
// go vet runs it on every package bottom-up, passing function summaries
// from dependencies to importers as facts, and caches the results.
// Warnings are potential races. Analyzer flags go after -vettool, for
// example -relay.filters=none to see every warning before filtering (see
// `racekit-vet help relay`).
package main

import (
	"github.com/racekit/racekit/static"
	"golang.org/x/tools/go/analysis/unitchecker"
)

func main() { unitchecker.Main(static.Analyzer) }
