// Package ifacecalls calls two interface methods in one function, as
// urfave/cli's flagSet does (c.WithSeparatorSpec(spec), then f.Apply(set)):
// a report's frame of that function must show the call the callee was
// entered from, the second (e2e TestInterfaceCallLines).
package ifacecalls

type Flag interface{ Apply(set map[string]bool) }

type separated interface{ WithSeparator(sep byte) }

type BoolFlag struct {
	Name    string
	applied bool
}

func (f *BoolFlag) Apply(set map[string]bool) {
	f.applied = true
	set[f.Name] = true
}

func (f *BoolFlag) WithSeparator(sep byte) { separators[sep]++ }

var separators [256]int

// HelpFlag is shared by every flag set, as urfave/cli's is.
var HelpFlag Flag = &BoolFlag{Name: "help"}

func flagSet(flags []Flag) map[string]bool {
	set := map[string]bool{}
	for _, f := range flags {
		if c, ok := f.(separated); ok {
			c.WithSeparator(',')
		}
		f.Apply(set)
	}
	return set
}

func Parse(flags ...Flag) map[string]bool {
	return flagSet(append(flags, HelpFlag))
}
