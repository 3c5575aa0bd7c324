package main

import (
	"os"
	"strings"

	"github.com/racekit/racekit/verdictdiff"
)

var cmdCorpus = register(&command{
	name:      "corpus",
	usageLine: "corpus [-keep DIR] [-json FILE] [-v] [SPEC ...]",
	short:     "measure whether instrumented tests pass as they do plainly, over a corpus of modules",
	long: `
Corpus checks that racekit preserves behaviour: for each module of the
corpus it runs the tests of the chosen packages with plain go test and with
racekit test, and reports per package whether each passed. A package counts
when its plain tests pass; the share that also pass instrumented is the
figure of merit (the target is 100%). Races racekit reports do not make a
package fail here: only go test's own verdict counts.

A SPEC is MODULE@VERSION[:PATTERNS], fetched through the Go module proxy
(go mod download) and copied to a temporary directory, or self[:PATTERNS]
for racekit's own module (the current directory's); PATTERNS is a comma-
separated list of package patterns (./... by default). Without SPECs the
corpus is:

` + "\t" + strings.Join(verdictdiff.DefaultSpecs(), "\n\t") + `

Both runs use -count=1 and -timeout=10m.

Exit status: 0 when every package that passes plainly passes instrumented,
1 otherwise or on an error.
`,
})

var (
	corpusKeep = cmdCorpus.flags.String("keep", "", "keep the module copies and logs in `DIR`")
	corpusJSON = cmdCorpus.flags.String("json", "", "also write the results as JSON to `FILE`")
	corpusV    = cmdCorpus.flags.Bool("v", false, "print go test's and racekit test's output")
)

func init() { cmdCorpus.run = runCorpus }

// runCorpus is racekit corpus: the comparison of each module's plain and
// instrumented verdicts runs in package verdictdiff, with this binary as
// racekit; its table is printed.
func runCorpus(c *command, args []string) int {
	self, err := os.Executable()
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	opts := verdictdiff.Options{Specs: args, Racekit: self, Work: *corpusKeep, Logf: c.errorf}
	if *corpusV {
		opts.Output = os.Stderr
	}
	res, err := verdictdiff.Run(opts)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	verdictdiff.Print(os.Stdout, res)
	code := exitOK
	if len(res.Errors) > 0 {
		code = exitError
	}
	if *corpusJSON != "" {
		if err := verdictdiff.WriteJSON(*corpusJSON, res); err != nil {
			c.errorf("%v", err)
			code = exitError
		}
	}
	if res.Kept < res.Passing {
		code = exitError
	}
	return code
}
