package gotestline

// goFlagKind says what a go test flag is and which value it takes.
type goFlagKind uint8

const (
	// goTestBinary flags are the test binary's (go test passes them on
	// as -test.NAME): racekit fuzz, hatch and replay take most of them.
	goTestBinary goFlagKind = 1 << iota
	// goBuild flags are go build's, and go test's own (-json, -c, -o,
	// -exec, -vet): racekit test passes them to go test.
	goBuild
	// goValue: the flag takes a value (-run X or -run=X); the others are
	// boolean (-v, or -v=false).
	goValue
	// goPerRun: a test binary flag that fuzz, hatch and replay pass to
	// each of their runs (the others write files or select benchmarks,
	// fuzzing or coverage: of no use to a run under racekit's control).
	goPerRun
	// goIgnored: accepted and dropped (-race: racekit is the race
	// detector here).
	goIgnored
	// goRefused: racekit cannot pass it on (the reason is in goRefusal).
	goRefused
)

// goFlags are go test's flags (go help testflag) and go build's (go help
// build, go help test), by name without the dash. TestGoFlagsTable checks
// it against the go command's help.
var goFlags = map[string]goFlagKind{
	// Test binary flags.
	"artifacts":            goTestBinary,
	"bench":                goTestBinary | goValue,
	"benchmem":             goTestBinary,
	"benchtime":            goTestBinary | goValue,
	"blockprofile":         goTestBinary | goValue,
	"blockprofilerate":     goTestBinary | goValue,
	"count":                goTestBinary | goValue | goPerRun,
	"coverprofile":         goTestBinary | goValue,
	"cpu":                  goTestBinary | goValue | goPerRun,
	"cpuprofile":           goTestBinary | goValue,
	"failfast":             goTestBinary | goPerRun,
	"fullpath":             goTestBinary | goPerRun,
	"fuzz":                 goTestBinary | goValue,
	"fuzzminimizetime":     goTestBinary | goValue,
	"fuzztime":             goTestBinary | goValue,
	"list":                 goTestBinary | goValue | goPerRun,
	"memprofile":           goTestBinary | goValue,
	"memprofilerate":       goTestBinary | goValue,
	"mutexprofile":         goTestBinary | goValue,
	"mutexprofilefraction": goTestBinary | goValue,
	"outputdir":            goTestBinary | goValue,
	"parallel":             goTestBinary | goValue | goPerRun,
	"run":                  goTestBinary | goValue | goPerRun,
	"short":                goTestBinary | goPerRun,
	"shuffle":              goTestBinary | goValue | goPerRun,
	"skip":                 goTestBinary | goValue | goPerRun,
	"timeout":              goTestBinary | goValue,
	"trace":                goTestBinary | goValue,
	"v":                    goTestBinary | goPerRun,
	// go test's own.
	"args": goBuild, // handled before the table is consulted
	"c":    goBuild,
	"exec": goBuild | goValue,
	"json": goBuild,
	"o":    goBuild | goValue,
	"vet":  goBuild | goValue,
	// go build's.
	"C":             goBuild | goValue | goRefused,
	"a":             goBuild,
	"n":             goBuild,
	"p":             goBuild | goValue,
	"race":          goBuild | goIgnored,
	"msan":          goBuild,
	"asan":          goBuild,
	"cover":         goBuild,
	"covermode":     goBuild | goValue,
	"coverpkg":      goBuild | goValue,
	"work":          goBuild,
	"x":             goBuild,
	"asmflags":      goBuild | goValue,
	"buildmode":     goBuild | goValue,
	"buildvcs":      goBuild,
	"compiler":      goBuild | goValue,
	"gccgoflags":    goBuild | goValue,
	"gcflags":       goBuild | goValue,
	"installsuffix": goBuild | goValue,
	"ldflags":       goBuild | goValue,
	"linkshared":    goBuild,
	"mod":           goBuild | goValue,
	"modcacherw":    goBuild,
	"modfile":       goBuild | goValue | goRefused,
	"overlay":       goBuild | goValue | goRefused,
	"pgo":           goBuild | goValue,
	"pkgdir":        goBuild | goValue,
	"tags":          goBuild | goValue,
	"trimpath":      goBuild,
	"toolexec":      goBuild | goValue,
}

// goRefusal says why racekit cannot pass a go flag on.
var goRefusal = map[string]string{
	"C":       "run racekit in that directory instead",
	"modfile": "racekit builds with its own -modfile (your go.mod is never modified)",
	"overlay": "racekit builds with its own -overlay (the instrumented copies of your files)",
}

// renamedFlags are racekit flags renamed because go test has the name, for
// the error a user of the old name gets.
var renamedFlags = map[string]string{
	"v":     "stats",
	"trace": "use-trace",
}

// IsGoFlag reports whether name (without the dash) is a go test or go
// build flag.
func IsGoFlag(name string) bool {
	_, ok := goFlags[name]
	return ok
}
