package testout

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// testEvent is go test -json's event (cmd/test2json).
type testEvent struct {
	Time    *time.Time `json:",omitempty"`
	Action  string
	Package string   `json:",omitempty"`
	Test    string   `json:",omitempty"`
	Elapsed *float64 `json:",omitempty"`
	Output  *string  `json:",omitempty"`
}

// heldEnd is an event of a test's end, held back with -json.
type heldEnd struct {
	line string
	e    testEvent
}

// endLine is a test's last line: "--- PASS: TestX (0.00s)", indented
// for a subtest.
var endLine = regexp.MustCompile(`^(\s*)--- (PASS|FAIL|SKIP): (\S+) (\(.*\))\n$`)

func (o *Output) jsonLine(line string) {
	var e testEvent
	if json.Unmarshal([]byte(line), &e) != nil || e.Package == "" {
		o.print(line)
		return
	}
	if e.Test != "" {
		if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" || e.Action == "output" && e.Output != nil && endLine.MatchString(*e.Output) {
			o.heldEnds[e.Package] = append(o.heldEnds[e.Package], heldEnd{line, e})
		} else {
			o.print(line)
		}
		return
	}
	switch {
	case e.Action == "output" && e.Output != nil && (*e.Output == "PASS\n" || *e.Output == "FAIL\n" || summaryLine.MatchString(strings.TrimSuffix(*e.Output, "\n"))):
		o.heldPkg[e.Package] = append(o.heldPkg[e.Package], line)
		return
	case e.Action != "pass" && e.Action != "fail":
		o.print(line)
		return
	}
	held := o.heldPkg[e.Package]
	delete(o.heldPkg, e.Package)
	ends := o.heldEnds[e.Package]
	delete(o.heldEnds, e.Package)
	byTest, n := o.packageRaces(e.Package)
	if n == 0 {
		for _, h := range ends {
			o.print(h.line)
		}
		for _, h := range held {
			o.print(h)
		}
		o.print(line)
		return
	}
	emit := func(ev testEvent) {
		ev.Time = nowPtr()
		ev.Package = e.Package
		data, _ := json.Marshal(ev)
		o.print(string(data) + "\n")
	}
	o.endTests(ends, byTest, emit)
	var elapsed string
	for _, h := range held {
		var he testEvent
		if json.Unmarshal([]byte(h), &he) == nil && he.Output != nil {
			if m := summaryLine.FindStringSubmatch(strings.TrimRight(*he.Output, "\n")); m != nil {
				elapsed = m[3]
			}
		}
	}
	fail, sum := "FAIL\n", "FAIL\t"+e.Package+elapsed+raceCount(byTest)+"\n"
	emit(testEvent{Action: "output", Output: &fail})
	emit(testEvent{Action: "output", Output: &sum})
	e.Action = "fail"
	e.Time = nowPtr()
	data, _ := json.Marshal(e)
	o.print(string(data) + "\n")
	o.failed++
}

// endTests writes the held-back ends of the tests of a package with races
// (-json): a racy test's end becomes its reports, its message and its
// "--- FAIL" line as output events, then its fail event (with the
// elapsed time of the event it replaces); the end of every test it is a
// subtest of fails too. The reports of races of no test, or of a test
// whose end was not seen, come after them.
func (o *Output) endTests(ends []heldEnd, byTest []*testRaces, emit func(testEvent)) {
	racy := map[string]*testRaces{}
	failing := map[string]bool{}
	for _, tr := range byTest {
		if tr.test == "" {
			continue
		}
		racy[tr.test] = tr
		for name := tr.test; name != ""; {
			failing[name] = true
			i := strings.LastIndexByte(name, '/')
			if i < 0 {
				break
			}
			name = name[:i]
		}
	}
	output := func(test, s string) { emit(testEvent{Action: "output", Test: test, Output: &s}) }
	reported := map[string]bool{}
	for _, h := range ends {
		test := h.e.Test
		switch {
		case !failing[test]:
			o.print(h.line)
		case h.e.Action == "output":
			if tr := racy[test]; tr != nil && !reported[test] {
				reported[test] = true
				o.writeTests([]*testRaces{tr}, true, output)
				continue
			}
			m := endLine.FindStringSubmatch(*h.e.Output)
			output(test, m[1]+"--- FAIL: "+test+" "+m[4]+"\n")
		default:
			e := h.e
			e.Action = "fail"
			e.Time = nowPtr() // after the reports' output events, as go test's are
			data, _ := json.Marshal(e)
			o.print(string(data) + "\n")
		}
	}
	var rest []*testRaces
	for _, tr := range byTest {
		if !reported[tr.test] {
			rest = append(rest, tr)
		}
	}
	o.writeTests(rest, true, func(test, s string) {
		output(test, s)
		if strings.HasPrefix(s, "--- FAIL: ") && test != "" {
			emit(testEvent{Action: "fail", Test: test})
		}
	})
	// The tests a stall stopped never ended: they fail, subtests first,
	// as the -timeout alarm's panic would have them fail.
	ended := map[string]bool{}
	for _, h := range ends {
		if h.e.Action != "output" {
			ended[h.e.Test] = true
		}
	}
	for _, tr := range byTest {
		if !tr.stall {
			continue
		}
		names := slices.Clone(tr.a.StallTests)
		sort.SliceStable(names, func(i, j int) bool { return strings.Count(names[i], "/") > strings.Count(names[j], "/") })
		for _, name := range names {
			if !ended[name] {
				output(name, "--- FAIL: "+name+" (racekit: deadlocked)\n")
				emit(testEvent{Action: "fail", Test: name})
			}
		}
	}
}

// nowPtr is the time of an event racekit writes or rewrites: a package's
// events stay in time order, the failures its analysis decided after go
// test's own events.
func nowPtr() *time.Time {
	now := time.Now()
	return &now
}
