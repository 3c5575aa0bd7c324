package main

import (
	"fmt"
	"math"
	"strings"
)

// series is one line of a panel.
type series struct {
	name string
	ys   []float64
}

// panel is one chart: x values and one or more lines over them.
type panel struct {
	title, xlabel, ylabel string
	xs                    []float64
	lines                 []series
}

// sweepPanels are the three charts of one parameter sweep, as in Figure
// 5.2: time, memory and the share of skipped events.
func sweepPanels(param string, xs []float64, rs []result) []panel {
	var tFT, tTree, mFT, mTree, sFT, sHybrid []float64
	for _, r := range rs {
		tFT, tTree = append(tFT, ms(r.timeFT)), append(tTree, ms(r.timeTree))
		mFT, mTree = append(mFT, float64(r.heapFT)/1024), append(mTree, float64(r.heapTree)/1024)
		sFT, sHybrid = append(sFT, r.skipFT), append(sHybrid, r.skipHybrid)
	}
	return []panel{
		{"time vs " + param, param, "ms", xs, []series{{"fasttrack", tFT}, {"TREE+fasttrack", tTree}}},
		{"live heap vs " + param, param, "KiB", xs, []series{{"fasttrack", mFT}, {"TREE+fasttrack", mTree}}},
		{"skipped vs " + param, param, "% events", xs, []series{{"TREE (fasttrack options)", sFT}, {"TREE (hybrid relation)", sHybrid}}},
	}
}

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"}

// svg draws the panels three to a row, each with axes, ticks, labels and
// one polyline per series, and a legend.
func svg(title string, ps []panel) string {
	const w, h, cols = 340, 260, 3
	rows := (len(ps) + cols - 1) / cols
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="10">`+"\n", cols*w, rows*h+30)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="18" font-size="13" text-anchor="middle">%s</text>`+"\n", cols*w/2, esc(title))
	for i, p := range ps {
		ox, oy := float64(i%cols*w), float64(30+i/cols*h)
		drawPanel(&s, p, ox, oy, w, h)
	}
	s.WriteString("</svg>\n")
	return s.String()
}

func drawPanel(s *strings.Builder, p panel, ox, oy float64, w, h float64) {
	const left, right, top, bottom = 55, 15, 20, 60
	pw, ph := w-left-right, h-top-bottom
	x0, y0 := ox+left, oy+top+ph // origin
	xmin, xmax := bounds(p.xs)
	var all []float64
	for _, l := range p.lines {
		all = append(all, l.ys...)
	}
	_, ymax := bounds(all)
	ymin := 0.0
	if ymax <= ymin {
		ymax = ymin + 1
	}
	ymax = niceCeil(ymax)
	if xmax <= xmin {
		xmax = xmin + 1
	}
	// x on a log scale when the values span more than a decade.
	logx := xmin > 0 && xmax/xmin > 10
	fx := func(x float64) float64 {
		if logx {
			return x0 + pw*(math.Log(x)-math.Log(xmin))/(math.Log(xmax)-math.Log(xmin))
		}
		return x0 + pw*(x-xmin)/(xmax-xmin)
	}
	fy := func(y float64) float64 { return y0 - ph*(y-ymin)/(ymax-ymin) }
	fmt.Fprintf(s, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`+"\n", x0+pw/2, oy+12, esc(p.title))
	fmt.Fprintf(s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0, y0, x0+pw, y0)
	fmt.Fprintf(s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0, y0, x0, y0-ph)
	for _, x := range p.xs {
		fmt.Fprintf(s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/><text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n",
			fx(x), y0, fx(x), y0+4, fx(x), y0+15, x)
	}
	for k := 0; k <= 4; k++ {
		y := ymin + (ymax-ymin)*float64(k)/4
		fmt.Fprintf(s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			x0, fy(y), x0+pw, fy(y), x0-4, fy(y)+3, tick(y))
	}
	scale := ""
	if logx {
		scale = " (log scale)"
	}
	fmt.Fprintf(s, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x0+pw/2, y0+28, esc(p.xlabel+scale))
	fmt.Fprintf(s, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", ox+14, y0-ph/2, ox+14, y0-ph/2, esc(p.ylabel))
	for i, l := range p.lines {
		c := colors[i%len(colors)]
		var pts []string
		for j, y := range l.ys {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", fx(p.xs[j]), fy(y)))
			fmt.Fprintf(s, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", fx(p.xs[j]), fy(y), c)
		}
		fmt.Fprintf(s, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(pts, " "), c)
		ly := y0 + 40 + float64(i)*11
		fmt.Fprintf(s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/><text x="%.1f" y="%.1f">%s</text>`+"\n",
			x0, ly-3, x0+18, ly-3, c, x0+22, ly, esc(l.name))
	}
}

func bounds(v []float64) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 1
	}
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func tick(y float64) string {
	if y >= 100 || y == math.Trunc(y) {
		return fmt.Sprintf("%.0f", y)
	}
	return fmt.Sprintf("%.2g", y)
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
