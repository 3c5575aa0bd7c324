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
	short:     "join the -json results of a sharded racekit fuzz or hatch campaign",
	long: `
Merge reads the -json results of the shards of one racekit fuzz campaign
(racekit fuzz -shard K/N -json, each of the N shards once, in any order)
and prints the whole campaign's result, as racekit fuzz would have: each
pair with its verdict, in phase 1's order, each outcome's failures compared
with the baseline runs of every shard. The shards of a racekit hatch
campaign (hatch -shard K/N -json) merge the same way: the anomalies in
prediction order with their verdicts, the split regions of every shard.
-json prints it as JSON.

The shards must agree on phase 1 (the same candidates): give fuzz -pairs,
-phase1 vet or -use-trace, and hatch -record-seed or -use-trace; runs
recorded under Go's scheduler may show other candidates in each shard.

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
	var fuzz []confirm.FuzzResult
	var hatch []confirm.HatchResult
	for _, path := range args {
		data, err := os.ReadFile(path)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		var kind struct {
			Pairs     json.RawMessage `json:"pairs"`
			Anomalies json.RawMessage `json:"anomalies"`
		}
		err = decodeResult(path, data, &kind)
		switch {
		case err != nil:
		case kind.Anomalies != nil:
			var r confirm.HatchResult
			err = decodeResult(path, data, &r)
			hatch = append(hatch, r)
		case kind.Pairs != nil:
			var r confirm.FuzzResult
			err = decodeResult(path, data, &r)
			fuzz = append(fuzz, r)
		default:
			err = fmt.Errorf("%s: neither a racekit fuzz nor a racekit hatch -json result", path)
		}
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if len(fuzz) > 0 && len(hatch) > 0 {
		c.errorf("%d racekit fuzz results and %d racekit hatch results: merge the shards of one campaign", len(fuzz), len(hatch))
		return exitError
	}
	var result any
	found := false
	var print func()
	var err error
	if len(hatch) > 0 {
		var m confirm.HatchResult
		m, err = confirm.MergeHatch(hatch)
		result, found, print = m, m.Found(), func() { confirm.PrintHatch(os.Stdout, &m) }
	} else {
		var m confirm.FuzzResult
		m, err = confirm.MergeFuzz(fuzz)
		result, found, print = m, m.Races(), func() { confirm.PrintFuzz(os.Stdout, m) }
	}
	if err == nil && *mergeJSON {
		err = writeJSON(os.Stdout, result)
	} else if err == nil {
		print()
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if found {
		return exitRaces
	}
	return exitOK
}

// decodeResult decodes one -json result, naming the file and, for bad
// JSON, the byte where it went wrong.
func decodeResult(path string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: byte %d: not a racekit -json result: %v", path, se.Offset, err)
		}
		return fmt.Errorf("%s: not a racekit -json result: %v", path, err)
	}
	return nil
}
