package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/racekit/racekit/confirm"
)

var cmdMerge = register(&command{
	name:      "merge",
	usageLine: "merge [-json] FILE...",
	short:     "join the -json results of a sharded racekit fuzz campaign",
	long: `
Merge reads the -json results of the shards of one racekit fuzz campaign
(racekit fuzz -shard K/N -json, each of the N shards once, in any order)
and prints the whole campaign's result, as racekit fuzz would have: each
pair with its verdict, in phase 1's order, each outcome's failures compared
with the baseline runs of every shard. -json prints it as JSON.

The shards must agree on phase 1 (the same candidates): give them -pairs,
-phase1 vet or -use-trace; runs recorded under Go's scheduler may show
other pairs in each shard.

Exit status: 66 if a race was confirmed or observed, 0 if none, 1 on a
missing, repeated or unreadable shard, 2 on a usage error.
`,
})

var mergeJSON = cmdMerge.flags.Bool("json", false, "print the merged result as JSON")

func init() { cmdMerge.run = runMerge }

func runMerge(c *command, args []string) int {
	if len(args) == 0 {
		c.errorf("expected the shards' result files")
		return exitUsage
	}
	var shards []confirm.FuzzResult
	for _, path := range args {
		r, err := readFuzzResult(path)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		shards = append(shards, r)
	}
	m, err := confirm.MergeFuzz(shards)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if *mergeJSON {
		if err := writeJSON(os.Stdout, m); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	} else {
		confirm.PrintFuzz(os.Stdout, m)
	}
	if m.Races() {
		return exitRaces
	}
	return exitOK
}

// readFuzzResult reads one racekit fuzz -json result.
func readFuzzResult(path string) (confirm.FuzzResult, error) {
	var r confirm.FuzzResult
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return r, fmt.Errorf("%s: byte %d: not a racekit fuzz -json result: %v", path, se.Offset, err)
		}
		return r, fmt.Errorf("%s: not a racekit fuzz -json result: %v", path, err)
	}
	return r, nil
}
