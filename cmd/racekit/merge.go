package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/racekit/racekit/confirm"
)

var cmdMerge = register(&command{
	name:      "merge",
	usageLine: "merge [-json] FILE...",
	short:     "join the -json results of a sharded racekit fuzz or hatch campaign",
	long: `
Merge reads the -json results of the shards of one racekit fuzz campaign
(racekit fuzz -shard K/N -json, each of the N shards once, in any order)
and prints the whole campaign's result, as racekit fuzz would have (with
-deadlocks and -atomicity too: every shard's cycles or regions): each
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
	kind, docs, err := readResults(args)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	result, found, print, err := mergeResults(kind, args, docs)
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

// readResults reads the result files and says which campaign's they are:
// "fuzz" (pairs), "hatch" (anomalies), "deadlocks" (cycles) or
// "atomicity" (splits), the same for all.
func readResults(paths []string) (string, [][]byte, error) {
	kind := ""
	var docs [][]byte
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", nil, err
		}
		var keys map[string]json.RawMessage
		if err := decodeResult(path, data, &keys); err != nil {
			return "", nil, err
		}
		k := ""
		switch {
		case keys["anomalies"] != nil:
			k = "hatch"
		case keys["pairs"] != nil:
			k = "fuzz"
		case keys["cycles"] != nil:
			k = "deadlocks"
		case keys["splits"] != nil:
			k = "atomicity"
		default:
			return "", nil, fmt.Errorf("%s: not a racekit fuzz or hatch -json result", path)
		}
		if kind != "" && k != kind {
			return "", nil, fmt.Errorf("%s: a racekit %s result among %s results: merge the shards of one campaign", path, k, kind)
		}
		kind = k
		docs = append(docs, data)
	}
	return kind, docs, nil
}

// mergeResults decodes the shards' results of one kind and merges them
// (package confirm): the merged result, whether it found a bug (exit 66)
// and how to print it as text.
func mergeResults(kind string, paths []string, docs [][]byte) (result any, found bool, print func(), err error) {
	switch kind {
	case "hatch":
		rs, err := decodeAll[confirm.HatchResult](paths, docs)
		if err != nil {
			return nil, false, nil, err
		}
		m, err := confirm.MergeHatch(rs)
		return m, m.Found(), func() { confirm.PrintHatch(os.Stdout, &m) }, err
	case "deadlocks":
		rs, err := decodeAll[confirm.DeadlockResult](paths, docs)
		if err != nil {
			return nil, false, nil, err
		}
		m, err := confirm.MergeDeadlocks(rs)
		found = slices.ContainsFunc(m.Cycles, func(c confirm.DeadlockCycle) bool { return c.Verdict == "confirmed" }) || len(m.Explored) > 0
		return m, found, func() {
			confirm.PrintDeadlocks(os.Stdout, m.Cycles)
			if len(m.Explored) > 0 {
				confirm.PrintExplored(os.Stdout, m.Explored, m.Explored[0].Runs)
			}
		}, err
	case "atomicity":
		rs, err := decodeAll[confirm.AtomicityResult](paths, docs)
		if err != nil {
			return nil, false, nil, err
		}
		m, err := confirm.MergeAtomicity(rs)
		found = slices.ContainsFunc(m.Splits, func(s confirm.AtomicitySplit) bool { return s.Verdict == "confirmed" })
		return m, found, func() { confirm.PrintAtomicity(os.Stdout, "fuzz", m.Splits) }, err
	}
	rs, err := decodeAll[confirm.FuzzResult](paths, docs)
	if err != nil {
		return nil, false, nil, err
	}
	m, err := confirm.MergeFuzz(rs)
	return m, m.Races(), func() { confirm.PrintFuzz(os.Stdout, m) }, err
}

// decodeAll decodes each document as a T.
func decodeAll[T any](paths []string, docs [][]byte) ([]T, error) {
	out := make([]T, len(docs))
	for i := range docs {
		if err := decodeResult(paths[i], docs[i], &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
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
