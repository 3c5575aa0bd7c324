package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/trace"
)

// evilTrace races on a variable and at sites whose names try to break out
// of the HTML.
func evilTrace() *trace.Trace {
	b := trace.NewBuilder()
	b.Fork("main", `T1"><script>alert(1)</script>`, "")
	b.Fork("main", "T2", "")
	b.Write(`T1"><script>alert(1)</script>`, `<script>alert("x")</script>`, `"><img src=x onerror=alert(2)>.go:3`)
	b.Read("T2", `<script>alert("x")</script>`, `a'&b<i>.go:4`)
	return b.Trace()
}

func clipPage(t *testing.T, tr *trace.Trace) (string, *anomaly.Anomaly) {
	t.Helper()
	res := anomaly.Find(tr, anomaly.Builtin(), anomaly.Options{})
	if len(res.Anomalies) != 1 {
		t.Fatalf("%d anomalies, want 1", len(res.Anomalies))
	}
	var buf bytes.Buffer
	if err := ClipHTML(&buf, &res.Anomalies[0]); err != nil {
		t.Fatal(err)
	}
	return buf.String(), &res.Anomalies[0]
}

func TestClipHTMLEscapesTraceNames(t *testing.T) {
	page, a := clipPage(t, evilTrace())
	for _, bad := range []string{"<script", "<img", "<i>", `"><img`, "onerror=alert(2)>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "a&#39;&amp;b&lt;i&gt;.go:4", `class="ev hit"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "http") || strings.Contains(page, "src=\"") {
		t.Error("page refers to an external resource")
	}
	var idx bytes.Buffer
	if err := ClipIndexHTML(&idx, "<b>title</b>", []IndexEntry{{Anomaly: a, Href: "clip-1.html"}}); err != nil {
		t.Fatal(err)
	}
	if s := idx.String(); strings.Contains(s, "<script") || strings.Contains(s, "<b>title") || !strings.Contains(s, `href="clip-1.html"`) {
		t.Errorf("index page is not escaped or lacks its link:\n%s", s)
	}
}

// figure1 is PECAN's Figure 1 trace (see detect/anomaly's tests).
func figure1() *trace.Trace {
	b := trace.NewBuilder()
	b.Fork("main", "t1", "main.go:10")
	b.Fork("main", "t2", "main.go:11")
	b.Acq("t1", "l")
	b.Write("t1", "x", "f1.go:1")
	b.Rel("t1", "l")
	b.Write("t1", "y", "f1.go:2")
	b.Read("t1", "x", "f1.go:3")
	b.Acq("t2", "l")
	b.Write("t2", "x", "f1.go:7")
	b.Rel("t2", "l")
	return b.Trace()
}

// TestClipHTMLInBrowser loads a clip page in headless Chromium, when
// installed, and checks the DOM it builds: one lane per goroutine, the
// anomaly's events highlighted, the malicious names inert.
func TestClipHTMLInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	for name, tr := range map[string]*trace.Trace{"fig1": figure1(), "evil": evilTrace()} {
		page, a := clipPage(t, tr)
		file := filepath.Join(dir, name+".html")
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://"+file).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		dom := string(out)
		if n, want := strings.Count(dom, `class="lane"`), len(a.Clip.Goroutines); n != want {
			t.Errorf("%s: %d lanes in the DOM, want %d", name, n, want)
		}
		if n := strings.Count(dom, `class="ev hit"`); n != 2 {
			t.Errorf("%s: %d highlighted events, want 2", name, n)
		}
		if !strings.Contains(dom, `data-role="1"`) || !strings.Contains(dom, `data-role="2"`) {
			t.Errorf("%s: anomaly steps not numbered", name)
		}
		if strings.Contains(dom, "<script") || strings.Contains(dom, "<img") {
			t.Errorf("%s: the trace injected elements into the DOM", name)
		}
	}
}
