package main

import (
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdConvert = register(&command{
	name:      "convert",
	usageLine: "convert [-to=rkt|std|rktx] [-lossy] IN OUT",
	short:     "convert a trace between binary .rkt, RAPID STD and racekit text",
	long: `
Convert reads IN in any format (sniffed) and writes OUT in the format named by
-to, or else by OUT's extension (.rkt, .std, .rktx). "-" names standard input
or output (give -to for output).

STD cannot express racekit's sync objects, atomics, read-mode locks,
BarrierPairs, function and region boundaries. Converting a trace that holds
them to STD fails at the first one, naming it, unless -lossy is given; then
they are dropped and counted on stderr. Every dropped op removes an edge or a
lock, never adds one, so a detector run on the lossy STD file may report
races the original trace does not have, but never misses one it has.
`,
})

// Set in init: run refers to the flags, which refer to the command.
func init() { cmdConvert.run = runConvert }

var (
	convertTo    = cmdConvert.flags.String("to", "", "output format: rkt, std or rktx (default: from OUT's extension)")
	convertLossy = cmdConvert.flags.Bool("lossy", false, "drop ops STD cannot express instead of failing")
)

func runConvert(c *command, args []string) int {
	if len(args) != 2 {
		c.errorf("expected IN and OUT")
		return exitUsage
	}
	var to tracefile.Format
	if *convertTo != "" {
		var err error
		if to, err = tracefile.ParseFormat(*convertTo); err != nil {
			c.errorf("%v", err)
			return exitUsage
		}
	}
	in, err := tracefile.Open(args[0])
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer in.Close()
	out, err := tracefile.Create(args[1], to, tracefile.Options{Lossy: *convertLossy})
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	_, err = trace.Copy(out, in)
	printWarnings(c, in.Reader)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if d, ok := out.Writer.(interface{ Dropped() map[trace.Op]int64 }); ok {
		for op, k := range d.Dropped() {
			c.errorf("dropped %d %s events STD cannot express", k, op)
		}
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	return exitOK
}
