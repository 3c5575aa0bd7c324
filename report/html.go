package report

import (
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/trace"
)

// ClipHTML writes one self-contained HTML page showing an anomaly's clip
// (PECAN's bug hatching clip): one lane (column) per goroutine, the events
// in schedule order (rows), the anomaly's events highlighted and numbered
// in pattern order, each event's source position as a file:// link, and a
// legend. Everything that comes from the trace (file, function, object and
// goroutine names) is escaped by html/template; the page has inline CSS,
// no script and no external resource.
func ClipHTML(w io.Writer, a *anomaly.Anomaly) error {
	return clipTmpl.Execute(w, clipView(a))
}

// IndexEntry is one line of the index page.
type IndexEntry struct {
	Anomaly *anomaly.Anomaly
	Href    string // relative link to its clip page
}

// ClipIndexHTML writes an index page listing anomalies with links to their
// clip pages.
func ClipIndexHTML(w io.Writer, title string, entries []IndexEntry) error {
	type row struct {
		N        int
		Href     string
		Pattern  string
		Kind     string
		Doc      string
		Sites    string
		Vars     string
		Evidence string
		Feasible bool
	}
	var rows []row
	for i, e := range entries {
		a := e.Anomaly
		rows = append(rows, row{N: i + 1, Href: e.Href, Pattern: a.Pattern, Kind: string(a.Kind), Doc: a.Doc,
			Sites: strings.Join(a.Sites, " → "), Vars: strings.Join(uniq(a.Vars), ", "), Evidence: a.Evidence,
			Feasible: a.Clip != nil && a.Clip.Feasible})
	}
	return indexTmpl.Execute(w, struct {
		Title string
		Rows  []row
	}{title, rows})
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		dup := false
		for _, o := range out {
			dup = dup || o == s
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out
}

type cell struct {
	Op, Obj, Site, Func string
	Href                template.URL
	Role                int // 1-based anomaly step, 0 if none
}

type lane struct {
	Name, Label, Parent, ForkSite string
	GID                           uint32
}

type row struct {
	N     int
	Cells []*cell // one per lane, nil where the goroutine does nothing
	Hit   bool
}

type view struct {
	Title, Pattern, Kind, Doc string
	Evidence                  string // potential, or confirmed / pruned by racekit hatch
	Sites                     []string
	Feasible, Observed        bool
	Lanes                     []lane
	Rows                      []row
}

func clipView(a *anomaly.Anomaly) *view {
	v := &view{Title: a.Pattern + " " + strings.Join(a.Sites, " "), Pattern: a.Pattern, Kind: string(a.Kind),
		Doc: a.Doc, Sites: a.Sites, Observed: a.Observed, Evidence: a.Evidence}
	c := a.Clip
	if c == nil {
		return v
	}
	v.Feasible = c.Feasible
	col := map[string]int{}
	for _, g := range c.Goroutines {
		col[g.Name] = len(v.Lanes)
		v.Lanes = append(v.Lanes, lane{Name: g.Name, Label: g.Label, Parent: g.Parent, ForkSite: g.ForkSite, GID: uint32(g.GID)})
	}
	byGID := map[uint32]string{}
	for _, g := range c.Goroutines {
		byGID[uint32(g.GID)] = g.Name
	}
	for i, s := range c.Steps {
		r := row{N: i + 1, Cells: make([]*cell, len(v.Lanes)), Hit: s.Anomaly > 0}
		op := s.Op
		if s.Read {
			op = "r" + op
		}
		obj := s.Name
		if obj == "" && s.Op != "begin" && s.Op != "end" {
			obj = "0x" + strconv.FormatUint(s.Obj, 16)
		}
		if s.Op == "fork" || s.Op == "join" {
			if n, ok := byGID[uint32(s.Obj)]; ok {
				obj = n
			}
		}
		r.Cells[col[s.G]] = &cell{Op: op, Obj: obj, Site: s.Site, Func: s.Func, Href: sourceURL(s.Site), Role: s.Anomaly}
		v.Rows = append(v.Rows, r)
	}
	return v
}

// sourceURL links a file:line:col site to the file. The URL is built by
// net/url, which percent-encodes everything but a path's safe characters,
// so it is safe to mark as a URL for html/template.
func sourceURL(site string) template.URL {
	if site == "" || site == "?" {
		return ""
	}
	st := trace.ParseSiteLabel(site)
	file, line := st.File, ""
	if st.Line > 0 {
		line = strconv.Itoa(st.Line)
	}
	if !filepath.IsAbs(file) {
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(file)}
	if line != "" {
		u.Fragment = "L" + line
	}
	return template.URL(u.String())
}

var funcs = template.FuncMap{
	"add1": func(i int) int { return i + 1 },
}

const css = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}
table.clip{border-collapse:collapse;margin-top:1em}
table.clip th,table.clip td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}
table.clip th{background:#f2f2f2;position:sticky;top:0}
td.n{color:#888;text-align:right}
td.ev{font-family:ui-monospace,monospace;font-size:12px}
td.ev .op{font-weight:bold}
td.ev a{color:#555;text-decoration:none;display:block}
td.ev a:hover{text-decoration:underline}
td.hit{background:#ffd6d6;border:2px solid #c00}
td.hit .role{display:inline-block;background:#c00;color:#fff;border-radius:.6em;padding:0 .4em;margin-right:.3em;font-weight:bold}
tr.hitrow td.n{color:#c00;font-weight:bold}
.legend{margin-top:1em;font-size:13px}
.legend span{display:inline-block;margin-right:1.5em}
.sw{display:inline-block;width:1em;height:1em;vertical-align:middle;border:1px solid #ccc;margin-right:.3em}
.sw.hit{background:#ffd6d6;border:2px solid #c00}
.bad{color:#c00;font-weight:bold}
.ok{color:#060;font-weight:bold}
`

var clipTmpl = template.Must(template.New("clip").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>` + css + `</style></head>
<body>
<h1>{{.Pattern}} <small>({{.Kind}})</small></h1>
<p>{{.Doc}}</p>
<p>Anomaly events, in pattern order: {{range $i, $s := .Sites}}<b>E{{add1 $i}}</b> {{$s}} {{end}}</p>
{{if not .Feasible}}<p class="bad">No feasible schedule was generated for this anomaly: it is likely a false alarm.</p>{{end}}
{{if .Observed}}<p>The recorded run already executed these events in this order.</p>{{end}}
{{if eq .Evidence "confirmed"}}<p class="ok">Confirmed: a controlled re-execution of the program (racekit hatch along this clip, or RaceFuzzer's scheduler) performed these events in this order.</p>{{else if eq .Evidence "pruned"}}<p class="bad">Pruned: a re-execution of the program along this clip (racekit hatch) departed from it; the anomaly is likely false.</p>{{end}}
<table class="clip" id="clip">
<thead><tr><th>#</th>{{range .Lanes}}<th class="lane" data-g="{{.Name}}">{{.Name}}<br><small>{{.Label}}{{if .GID}} (gid {{.GID}}){{end}}{{if .Parent}}, forked by {{.Parent}}{{if .ForkSite}} at {{.ForkSite}}{{end}}{{end}}</small></th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr{{if .Hit}} class="hitrow"{{end}}><td class="n">{{.N}}</td>{{range .Cells}}{{if .}}<td class="ev{{if .Role}} hit{{end}}"{{if .Role}} data-role="{{.Role}}"{{end}}>{{if .Role}}<span class="role">E{{.Role}}</span>{{end}}<span class="op">{{.Op}}</span> {{.Obj}}{{if .Site}}<a href="{{.Href}}" title="{{.Func}}">{{.Site}}</a>{{end}}</td>{{else}}<td></td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
<div class="legend"><b>Legend</b>:
<span>one column per goroutine (named by creation order: g0, its first child g0.1, ...), one row per event in schedule order</span>
<span><i class="sw hit"></i>the anomaly's events, E1, E2, ... in pattern order</span>
<span>r/w read/write, acq/rel lock (racq/rrel: read mode), snd/rcv message, fork/join, aload/astore/armw atomic, enter/exit function</span>
<span>links open the source file at the event's line</span>
</div>
</body></html>
`))

var indexTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>` + css + `</style></head>
<body>
<h1>{{.Title}}</h1>
<table class="clip">
<thead><tr><th>#</th><th>pattern</th><th>kind</th><th>events</th><th>variables</th><th>evidence</th><th>clip</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td class="n">{{.N}}</td><td title="{{.Doc}}">{{.Pattern}}</td><td>{{.Kind}}</td><td>{{.Sites}}</td><td>{{.Vars}}</td><td>{{.Evidence}}</td><td><a href="{{.Href}}">{{if .Feasible}}clip{{else}}clip (infeasible){{end}}</a></td></tr>
{{end}}</tbody></table>
</body></html>
`))
