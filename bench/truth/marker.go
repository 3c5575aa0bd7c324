// Package truth reads the ground truth of racekit's subject programs
// (bench/subjects): marker comments on the source lines that take part in a
// known race or access anomaly, and on the lines that only look racy to a
// lockset analysis. Load turns a subject's markers into expected site pairs.
//
// # Marker grammar
//
// A marker is a line comment that trails code on its line; its text (after
// "//" and blanks) starts with "racekit:". One comment may hold several
// markers, each starting with a "racekit:" word:
//
//	comment   = "//" { " " } marker { " " marker }
//	marker    = "racekit:race" attrs | "racekit:norace" attrs
//	attrs     = { " " attr }
//	attr      = key "=" value | flag
//	value     = word | go-quoted-string       (word: no blanks, no quotes)
//	id-list   = id { "," id }                 (id: [a-z0-9][a-z0-9._-]*)
//
// racekit:race keys: id=id-list (required), kind=race|atomicity|atomic-set
// (required), benign=true|false (required), note=value (optional); flags
// self and flaky. racekit:norace keys: id=id-list and why=value (both
// required); flag self. A key may appear once per marker.
//
// # Meaning
//
// An id names one known race or anomaly of one subject (ids are scoped to
// the subject directory). Its sites are the lines that carry it; an id
// needs two lines, or one line marked self.
//
//   - kind=race: a data race (two accesses, one a write, unordered). Every
//     two distinct lines of the id form an expected site pair, and each
//     such pair must race: an id of more than two lines is a clique (say,
//     four stores that all conflict with each other and with one load), so
//     two loads never share an id. A line marked self also pairs with
//     itself: two dynamic instances of the statement, in two goroutines,
//     race. A race between only some pairs of a set of lines needs one id
//     per pair; a line takes part in several races by listing several ids.
//   - kind=atomicity: an atomicity violation (PECAN): accesses of one
//     atomic region interleaved by a remote conflicting access; every
//     access may be lock-protected, so it need not be a data race. The
//     id's lines are the violation's accesses (the two local ones and the
//     remote one; self when the remote access is another instance of a
//     local statement); an anomaly finding matches when every one of its
//     lines carries the id (a repeated line only if marked self).
//   - kind=atomic-set: an atomic-set serializability violation (PECAN):
//     the same over a set of locations that must change together.
//   - benign=true: the race is real but harmless by design (a statistics
//     counter, a rechecked bound); it still counts as a true race.
//   - flaky: whether one run shows this race to a happens-before detector
//     depends on the schedule (a select that may not time out, incidental
//     lock handoffs that usually order the two accesses).
//
// racekit:norace marks pairs that a lockset analysis flags (no common lock,
// or a read-mode lock) but that are ordered by happens-before (a channel
// handoff, a barrier, sync.Once, a WaitGroup, a go statement) or otherwise
// safe: the false alarms a precise tool must avoid. Every pair of its lines
// is such a pair. why says what orders them.
//
// Every marker is argued in a comment next to it: why it races, or why it
// does not.
package truth

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of a known anomaly.
type Kind string

const (
	KindRace      Kind = "race"
	KindAtomicity Kind = "atomicity"
	KindAtomicSet Kind = "atomic-set"
)

// Kinds lists the valid kinds.
var Kinds = []Kind{KindRace, KindAtomicity, KindAtomicSet}

func validKind(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Marker is one parsed racekit:race or racekit:norace directive.
type Marker struct {
	NoRace bool     // racekit:norace
	IDs    []string // at least one
	Kind   Kind     // race markers only
	Benign bool     // race markers only
	Self   bool     // the line pairs with itself
	Flaky  bool     // race markers only
	Note   string   // race markers: optional note
	Why    string   // norace markers: required reason
}

const prefix = "racekit:"

// atomicDirective is the front end's mark of an atomic function
// (instrument: //racekit:atomic), not a ground-truth marker.
const atomicDirective = prefix + "atomic"

// IsMarkerComment reports whether a comment's text (with or without the
// leading "//") is meant as a marker: it starts with "racekit:" and is
// not the front end's //racekit:atomic directive.
func IsMarkerComment(text string) bool {
	t := trimComment(text)
	return strings.HasPrefix(t, prefix) && strings.TrimSpace(t) != atomicDirective
}

func trimComment(text string) string {
	text = strings.TrimPrefix(text, "//")
	return strings.TrimLeft(text, " \t")
}

// ParseComment parses the markers of one line comment (with or without the
// leading "//"). A comment that does not start with "racekit:" holds no
// marker and gives (nil, nil).
func ParseComment(text string) ([]Marker, error) {
	if !IsMarkerComment(text) {
		return nil, nil
	}
	text = trimComment(text)
	toks, err := tokenize(text)
	if err != nil {
		return nil, err
	}
	var out []Marker
	var cur *Marker
	seen := map[string]bool{}
	finish := func() error {
		if cur == nil {
			return nil
		}
		if err := cur.check(seen); err != nil {
			return err
		}
		out = append(out, *cur)
		return nil
	}
	for _, t := range toks {
		if strings.HasPrefix(t, prefix) && !strings.Contains(t, "=") {
			if err := finish(); err != nil {
				return nil, err
			}
			switch t {
			case prefix + "race":
				cur = &Marker{}
			case prefix + "norace":
				cur = &Marker{NoRace: true}
			default:
				return nil, fmt.Errorf("unknown marker %q (want racekit:race or racekit:norace)", t)
			}
			seen = map[string]bool{}
			continue
		}
		if cur == nil { // cannot happen: the text starts with the prefix
			return nil, fmt.Errorf("attribute %q before any marker", t)
		}
		if err := cur.attr(t, seen); err != nil {
			return nil, err
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// tokenize splits on blanks, keeping Go-quoted values (key="a b") whole.
func tokenize(s string) ([]string, error) {
	var toks []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return toks, nil
		}
		i := 0
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '"' {
			i++
		}
		if i < len(s) && s[i] == '"' {
			if i == 0 || s[i-1] != '=' {
				return nil, fmt.Errorf("unexpected quote in %q", firstWord(s))
			}
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return nil, fmt.Errorf("unterminated or invalid quoted value in %q", firstWord(s))
			}
			end := i + len(q)
			if end < len(s) && s[end] != ' ' && s[end] != '\t' {
				return nil, fmt.Errorf("text after quoted value in %q", firstWord(s))
			}
			i = end
		}
		toks = append(toks, s[:i])
		s = s[i:]
	}
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

func (m *Marker) name() string {
	if m.NoRace {
		return prefix + "norace"
	}
	return prefix + "race"
}

func (m *Marker) attr(t string, seen map[string]bool) error {
	key, val, hasVal := strings.Cut(t, "=")
	if seen[key] {
		return fmt.Errorf("%s: %s given twice", m.name(), key)
	}
	seen[key] = true
	if !hasVal {
		switch {
		case key == "self":
			m.Self = true
		case key == "flaky" && !m.NoRace:
			m.Flaky = true
		default:
			return fmt.Errorf("%s: unknown flag %q", m.name(), key)
		}
		return nil
	}
	if strings.HasPrefix(val, `"`) {
		u, err := strconv.Unquote(val)
		if err != nil {
			return fmt.Errorf("%s: %s: bad quoted value %s", m.name(), key, val)
		}
		val = u
	}
	switch {
	case key == "id":
		for _, id := range strings.Split(val, ",") {
			if !validID(id) {
				return fmt.Errorf("%s: bad id %q (want [a-z0-9][a-z0-9._-]*)", m.name(), id)
			}
			for _, x := range m.IDs {
				if x == id {
					return fmt.Errorf("%s: id %q listed twice", m.name(), id)
				}
			}
			m.IDs = append(m.IDs, id)
		}
	case key == "kind" && !m.NoRace:
		if !validKind(Kind(val)) {
			return fmt.Errorf("%s: unknown kind %q (want race, atomicity or atomic-set)", m.name(), val)
		}
		m.Kind = Kind(val)
	case key == "benign" && !m.NoRace:
		b, err := strconv.ParseBool(val)
		if err != nil || (val != "true" && val != "false") {
			return fmt.Errorf("%s: benign=%q (want true or false)", m.name(), val)
		}
		m.Benign = b
	case key == "note" && !m.NoRace:
		m.Note = val
	case key == "why" && m.NoRace:
		if strings.TrimSpace(val) == "" {
			return fmt.Errorf("%s: empty why", m.name())
		}
		m.Why = val
	default:
		return fmt.Errorf("%s: unknown key %q", m.name(), key)
	}
	return nil
}

func (m *Marker) check(seen map[string]bool) error {
	var missing []string
	need := []string{"id", "kind", "benign"}
	if m.NoRace {
		need = []string{"id", "why"}
	}
	for _, k := range need {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing %s", m.name(), strings.Join(missing, ", "))
	}
	return nil
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// String formats the marker in the canonical form ParseComment reads.
func (m Marker) String() string {
	var b strings.Builder
	b.WriteString(m.name())
	b.WriteString(" id=")
	b.WriteString(strings.Join(m.IDs, ","))
	if m.NoRace {
		b.WriteString(" why=")
		b.WriteString(formatValue(m.Why))
	} else {
		b.WriteString(" kind=")
		b.WriteString(string(m.Kind))
		b.WriteString(" benign=")
		b.WriteString(strconv.FormatBool(m.Benign))
		if m.Note != "" {
			b.WriteString(" note=")
			b.WriteString(formatValue(m.Note))
		}
	}
	if m.Self {
		b.WriteString(" self")
	}
	if m.Flaky {
		b.WriteString(" flaky")
	}
	return b.String()
}

// formatValue writes a value bare when it reads back as itself.
func formatValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\"\\") && strconv.CanBackquote(v) &&
		!strings.Contains(v, prefix) && !strings.ContainsRune(v, '\uFFFD') {
		return v
	}
	return strconv.Quote(v)
}
