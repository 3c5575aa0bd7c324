package static_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/racekit/racekit/static"
	"golang.org/x/tools/go/analysis/analysistest"
)

// warnings runs the analyzer on a testdata package (checking its want
// comments) and returns every warning, filtered ones included.
func warnings(t *testing.T, pkg string) []static.Warning {
	t.Helper()
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, pkg)
	var ws []static.Warning
	for _, r := range rs {
		if res, ok := r.Result.(*static.Result); ok {
			ws = append(ws, res.Warnings...)
		}
	}
	return ws
}

func find(ws []static.Warning, a, b string) *static.Warning {
	for i := range ws {
		w := &ws[i]
		if strings.HasSuffix(w.A.Site, a) && strings.HasSuffix(w.B.Site, b) {
			return w
		}
	}
	return nil
}

// TestFilters: for each filter, a warning it removes and one it keeps
// (testdata/src/filters). Kept warnings are also checked as diagnostics by
// the want comments.
func TestFilters(t *testing.T) {
	ws := warnings(t, "filters")
	cases := []struct {
		name    string
		a, b    string // sites of the two accesses
		matches []string
		removed string
	}{
		{"thread-local removes", "others.go:13:5", "others.go:16:13", []string{"thread-local", "large-reps", "unpublished"}, "thread-local"},
		{"thread-local keeps", "others.go:23:5", "others.go:25:11", nil, ""},
		{"large-reps removes", "others.go:31:16", "others.go:32:11", []string{"large-reps"}, "large-reps"},
		{"large-reps keeps", "others.go:42:16", "others.go:43:11", nil, ""},
		{"bootup removes", "others.go:50:14", "others.go:51:6", []string{"bootup"}, "bootup"},
		{"bootup keeps", "others.go:56:14", "others.go:57:9", nil, ""},
		{"same-entry matches (off by default)", "others.go:66:15", "others.go:66:15", []string{"same-entry"}, ""},
		{"same-entry does not match", "others.go:71:2", "others.go:75:2", nil, ""},
		{"unpublished matches", "others.go:87:4", "others.go:101:16", []string{"thread-local", "large-reps", "unpublished"}, "thread-local"},
		{"unpublished does not match", "others.go:99:5", "others.go:101:16", []string{"thread-local", "large-reps"}, "thread-local"},
		{"handoff removes (channel)", "handoff.go:12:3", "handoff.go:15:9", []string{"handoff"}, "handoff"},
		{"handoff removes (WaitGroup)", "handoff.go:25:3", "handoff.go:28:9", []string{"handoff"}, "handoff"},
		{"handoff removes (select)", "handoff.go:54:3", "handoff.go:63:10", []string{"handoff"}, "handoff"},
		{"handoff keeps", "handoff.go:36:3", "handoff.go:39:7", nil, ""},
	}
	for _, c := range cases {
		w := find(ws, c.a, c.b)
		if w == nil {
			t.Errorf("%s: no warning between %s and %s", c.name, c.a, c.b)
			continue
		}
		if !reflect.DeepEqual(w.Matches, c.matches) || w.Removed != c.removed {
			t.Errorf("%s: matches %v removed %q, want %v removed %q", c.name, w.Matches, w.Removed, c.matches, c.removed)
		}
	}
}

// TestRefilter: the count of removed warnings per filter follows the
// enabled set and the order of application.
func TestRefilter(t *testing.T) {
	ws := []static.Warning{
		{Matches: []string{"thread-local", "large-reps"}},
		{Matches: []string{"large-reps"}},
		{Matches: []string{"same-entry"}},
		{},
	}
	kept, removed := static.Refilter(ws, map[string]bool{"large-reps": true, "same-entry": true})
	if kept != 1 || !reflect.DeepEqual(removed, map[string]int{"large-reps": 2, "same-entry": 1}) {
		t.Errorf("kept %d removed %v", kept, removed)
	}
	if ws[0].Removed != "large-reps" || ws[3].Removed != "" {
		t.Errorf("removed by %q and %q", ws[0].Removed, ws[3].Removed)
	}
	kept, removed = static.Refilter(ws, nil)
	if kept != 4 || len(removed) != 0 {
		t.Errorf("no filters: kept %d removed %v", kept, removed)
	}
}
