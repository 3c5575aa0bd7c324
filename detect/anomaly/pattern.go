package anomaly

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Kind is a family of access anomalies.
type Kind string

// The families of built-in patterns, and user patterns.
const (
	KindRace      Kind = "race"      // data races (§3): two consecutive conflicting accesses
	KindAtomicity Kind = "atomicity" // single-variable atomicity violations
	KindASV       Kind = "asv"       // atomic-set serializability violations (Vaziri et al.)
	KindUser      Kind = "user"      // patterns read from a file
)

// Pattern is an access-anomaly pattern [E, T, SV, AR, AT] (§3): k steps,
// step i being an access by thread symbol T[i] to shared-variable symbol
// SV[i] inside atomic-region symbol AR[i], of type AT[i]. Equal symbols
// mean the same goroutine, variable or region; different symbols
// different ones. An instance is k events that some feasible schedule can
// execute in the order E[0], ..., E[k-1]; with Consecutive, adjacent steps
// must also run back to back (data races: "the two events happen
// consecutively").
type Pattern struct {
	Name        string
	Kind        Kind
	T, SV, AR   []string
	AT          []bool // true: write
	Consecutive bool
	Doc         string
}

// Len is the number of steps.
func (p *Pattern) Len() int { return len(p.T) }

// String writes the pattern in the file syntax.
func (p *Pattern) String() string {
	at := make([]string, len(p.AT))
	for i, w := range p.AT {
		at[i] = "r"
		if w {
			at[i] = "w"
		}
	}
	s := fmt.Sprintf("%s T=%s SV=%s AR=%s AT=%s", p.Name, strings.Join(p.T, "-"),
		strings.Join(p.SV, "-"), strings.Join(p.AR, "-"), strings.Join(at, "-"))
	if p.Consecutive {
		s += " consecutive"
	}
	return s
}

// structure is the pattern without its name: two patterns with the same
// structure find the same instances.
func (p *Pattern) structure() string {
	s := p.String()
	return s[len(p.Name):]
}

// check validates a pattern: equal lengths, at least two steps and two
// thread symbols, and a region symbol used by one thread symbol only.
func (p *Pattern) check() error {
	k := len(p.T)
	if len(p.SV) != k || len(p.AR) != k || len(p.AT) != k {
		return fmt.Errorf("T, SV, AR and AT must have the same length (%d, %d, %d, %d)", k, len(p.SV), len(p.AR), len(p.AT))
	}
	if k < 2 {
		return fmt.Errorf("a pattern needs at least two events")
	}
	if k > 8 {
		return fmt.Errorf("a pattern has at most 8 events")
	}
	threads := map[string]bool{}
	owner := map[string]string{}
	for i := 0; i < k; i++ {
		threads[p.T[i]] = true
		if t, ok := owner[p.AR[i]]; ok && t != p.T[i] {
			return fmt.Errorf("region %s is used by threads %s and %s: a region belongs to one thread", p.AR[i], t, p.T[i])
		}
		owner[p.AR[i]] = p.T[i]
	}
	if len(threads) < 2 {
		return fmt.Errorf("a pattern needs at least two threads")
	}
	return nil
}

func mk(name string, kind Kind, t, sv, ar, at, doc string, consecutive bool) *Pattern {
	p := &Pattern{Name: name, Kind: kind, T: strings.Split(t, "-"), SV: strings.Split(sv, "-"),
		AR: strings.Split(ar, "-"), Consecutive: consecutive, Doc: doc}
	for _, a := range strings.Split(at, "-") {
		p.AT = append(p.AT, a == "w")
	}
	if err := p.check(); err != nil {
		panic(name + ": " + err.Error())
	}
	return p
}

// Builtin returns the built-in patterns (§3, Figure 2):
//
//   - data races: r-w, w-r, w-w by two threads on one variable, consecutive;
//   - atomicity violations: the four unserializable interleavings of a
//     remote access between two accesses of one atomic region to one
//     variable: r-w-r, w-w-r, w-r-w, r-w-w;
//   - atomic-set serializability violations: the eleven problematic
//     interleavings of Vaziri, Tip and Dolby (POPL'06), u and u' being
//     units of work (atomic regions) and l1, l2 locations of one atomic set
//     (PECAN: all locations one region accesses form an atomic set).
//
// The primary source of the eleven (POPL'06, its table of problematic
// interleavings) was not available to us. Patterns 1-5 (one location) are
// confirmed by a secondary source that implements them (jPredictor's
// AtomicSetChecker: five single-location patterns, only pattern 3 has u'
// reading); patterns 6-11 (two locations) are our reconstruction and
// include PECAN's own example, W R R W (pattern 10). ASV 1-4 have the
// same structure as the atomicity patterns and are reported once.
func Builtin() []*Pattern {
	return []*Pattern{
		mk("race-r-w", KindRace, "t1-t2", "s1-s1", "u1-u2", "r-w", "read then unsynchronized write", true),
		mk("race-w-r", KindRace, "t1-t2", "s1-s1", "u1-u2", "w-r", "write then unsynchronized read", true),
		mk("race-w-w", KindRace, "t1-t2", "s1-s1", "u1-u2", "w-w", "two unsynchronized writes", true),

		mk("av-r-w-r", KindAtomicity, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "r-w-r", "two reads of one region see different values", false),
		mk("av-w-w-r", KindAtomicity, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "w-w-r", "a region reads back a value another overwrote", false),
		mk("av-w-r-w", KindAtomicity, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "w-r-w", "another region reads an intermediate value", false),
		mk("av-r-w-w", KindAtomicity, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "r-w-w", "lost update: a region writes back based on a stale read", false),

		mk("asv-1", KindASV, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "r-w-r", "Ru(l) Wu'(l) Ru(l)", false),
		mk("asv-2", KindASV, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "w-w-r", "Wu(l) Wu'(l) Ru(l)", false),
		mk("asv-3", KindASV, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "w-r-w", "Wu(l) Ru'(l) Wu(l)", false),
		mk("asv-4", KindASV, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "r-w-w", "Ru(l) Wu'(l) Wu(l)", false),
		mk("asv-5", KindASV, "t1-t2-t1", "s1-s1-s1", "u1-u2-u1", "w-w-w", "Wu(l) Wu'(l) Wu(l)", false),
		mk("asv-6", KindASV, "t1-t2-t1-t2", "s1-s2-s2-s1", "u1-u2-u1-u2", "w-w-w-w", "Wu(l1) Wu'(l2) Wu(l2) Wu'(l1)", false),
		mk("asv-7", KindASV, "t1-t2-t2-t1", "s1-s2-s1-s2", "u1-u2-u2-u1", "w-w-w-w", "Wu(l1) Wu'(l2) Wu'(l1) Wu(l2)", false),
		mk("asv-8", KindASV, "t1-t2-t2-t1", "s1-s1-s2-s2", "u1-u2-u2-u1", "w-w-w-w", "Wu(l1) Wu'(l1) Wu'(l2) Wu(l2)", false),
		mk("asv-9", KindASV, "t1-t2-t1-t2", "s1-s2-s2-s1", "u1-u2-u1-u2", "w-r-w-r", "Wu(l1) Ru'(l2) Wu(l2) Ru'(l1)", false),
		mk("asv-10", KindASV, "t1-t2-t2-t1", "s1-s1-s2-s2", "u1-u2-u2-u1", "w-r-r-w", "Wu(l1) Ru'(l1) Ru'(l2) Wu(l2)", false),
		mk("asv-11", KindASV, "t1-t2-t2-t1", "s1-s1-s2-s2", "u1-u2-u2-u1", "r-w-w-r", "Ru(l1) Wu'(l1) Wu'(l2) Ru(l2)", false),
	}
}

// ParsePatterns reads user patterns, one per line, in the paper's notation:
//
//	# a comment; blank lines are ignored
//	NAME T=t1-t2-t1 SV=s1-s1-s1 AR=u1-u2-u1 AT=r-w-r [consecutive]
//
// Symbols are any words without '-', '=', '#' or spaces; AT letters are r
// or w. The four fields may come in any order. name says where the input
// came from in errors, which read "name:line:col: message".
func ParsePatterns(name string, r io.Reader) ([]*Pattern, error) {
	var ps []*Pattern
	sc := bufio.NewScanner(r)
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		errAt := func(col int, format string, args ...any) error {
			return fmt.Errorf("%s:%d:%d: %s", name, line, col, fmt.Sprintf(format, args...))
		}
		fields, cols := splitFields(text)
		if len(fields) == 0 {
			continue
		}
		p := &Pattern{Name: fields[0], Kind: KindUser, Doc: "user pattern"}
		if strings.ContainsAny(p.Name, "=-") {
			return nil, errAt(cols[0], "expected a pattern name first, got %q", p.Name)
		}
		if l, dup := seen[p.Name]; dup {
			return nil, errAt(cols[0], "pattern %s already defined on line %d", p.Name, l)
		}
		seen[p.Name] = line
		have := map[string]bool{}
		for i := 1; i < len(fields); i++ {
			f, col := fields[i], cols[i]
			if f == "consecutive" {
				p.Consecutive = true
				continue
			}
			key, val, ok := strings.Cut(f, "=")
			if !ok {
				return nil, errAt(col, "expected KEY=a-b-c or \"consecutive\", got %q", f)
			}
			if have[key] {
				return nil, errAt(col, "%s given twice", key)
			}
			have[key] = true
			syms := strings.Split(val, "-")
			for j, s := range syms {
				if s == "" {
					return nil, errAt(col+len(key)+1+symOffset(syms, j), "empty symbol in %s", key)
				}
			}
			switch key {
			case "T":
				p.T = syms
			case "SV":
				p.SV = syms
			case "AR":
				p.AR = syms
			case "AT":
				for j, s := range syms {
					switch s {
					case "r", "R":
						p.AT = append(p.AT, false)
					case "w", "W":
						p.AT = append(p.AT, true)
					default:
						return nil, errAt(col+len(key)+1+symOffset(syms, j), "access type %q: want r or w", s)
					}
				}
			default:
				return nil, errAt(col, "unknown field %q (want T, SV, AR, AT)", key)
			}
		}
		for _, k := range []string{"T", "SV", "AR", "AT"} {
			if !have[k] {
				return nil, errAt(cols[0], "pattern %s has no %s field", p.Name, k)
			}
		}
		if err := p.check(); err != nil {
			return nil, errAt(cols[0], "pattern %s: %v", p.Name, err)
		}
		ps = append(ps, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return ps, nil
}

func symOffset(syms []string, j int) int {
	n := 0
	for i := 0; i < j; i++ {
		n += len(syms[i]) + 1
	}
	return n
}

// splitFields splits on spaces and tabs and returns each field's 1-based
// column.
func splitFields(s string) ([]string, []int) {
	var fs []string
	var cols []int
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				fs = append(fs, s[start:i])
				cols = append(cols, start+1)
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return fs, cols
}

// LoadPatterns reads a pattern file.
func LoadPatterns(path string) ([]*Pattern, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParsePatterns(path, f)
}
