// Command plot draws the figures of docs/economy.md from benchmark output:
// the lines of `go test -bench` (any number of runs; the median of each
// benchmark is plotted) and those of benchmarks/reference/delta.mjs.
//
// Usage, from the repository root:
//
//	go run ./benchmarks/plot -out docs FILE...
//
// It writes OUT/economy-delta.png, the cost of one STATE_DELTA against the
// state's size for each row of BenchmarkCost, beside BenchmarkCostFloor
// (encoding/json and an in-place edit) and BenchmarkReferenceCost (the
// reference client), log-log; and OUT/economy-messages.png, the cost of
// each event of BenchmarkMessageEvents against the messages held. A figure
// whose benchmarks are in no FILE is not drawn.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func main() {
	out := flag.String("out", "docs", "the directory to write the PNGs to")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: plot [-out DIR] FILE... (go test -bench output, delta.mjs output)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	results := map[string][]float64{}
	for _, file := range flag.Args() {
		if err := readBench(file, results); err != nil {
			fail(err)
		}
	}
	medians := map[string]float64{}
	for name, ns := range results {
		medians[name] = median(ns)
	}
	drawn := 0
	for _, f := range []struct {
		file string
		draw func(map[string]float64, string) (bool, error)
	}{
		{"economy-delta.png", deltaFigure},
		{"economy-messages.png", messagesFigure},
	} {
		path := filepath.Join(*out, f.file)
		ok, err := f.draw(medians, path)
		if err != nil {
			fail(err)
		}
		if ok {
			fmt.Println("wrote", path)
			drawn++
		}
	}
	if drawn == 0 {
		fail(fmt.Errorf("no BenchmarkCost or BenchmarkMessageEvents results in %s", strings.Join(flag.Args(), ", ")))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "plot:", err)
	os.Exit(1)
}

// benchLine matches a result line: the name without its -GOMAXPROCS
// suffix, and ns/op.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([0-9.e+]+) ns/op`)

// readBench adds the ns/op of each result line of file to results, by
// benchmark name.
func readBench(file string, results map[string][]float64) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := benchLine.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		ns, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", file, s.Text(), err)
		}
		results[m[1]] = append(results[m[1]], ns)
	}
	return s.Err()
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// sizes are the state sizes of BenchmarkCost, by the names it gives them.
var sizes = map[string]float64{"1KB": 1 << 10, "100KB": 100 << 10, "1MB": 1 << 20, "10MB": 10 << 20}

// rowTitles describe the rows of BenchmarkCost.
var rowTitles = map[string]string{
	"sections-replace":         "nested sections: replace an item's field",
	"wide-array-replace-score": "wide array: replace one score",
	"wide-object-add":          "wide object: add a member",
	"wide-object-remove":       "wide object: remove a member",
	"list-insert-0":            "array: insert at index 0",
	"deep-replace":             "replace 64 levels down",
}

// series is one line of a figure: a benchmark family and how it is drawn.
type series struct {
	prefix string
	label  string
	color  color.Color
	dashes []vg.Length
	shape  draw.GlyphDrawer
}

var (
	blue   = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	orange = color.RGBA{0xff, 0x7f, 0x0e, 0xff}
	green  = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	red    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	purple = color.RGBA{0x94, 0x67, 0xbd, 0xff}
	grey   = color.RGBA{0x55, 0x55, 0x55, 0xff}
)

var deltaSeries = []series{
	{"BenchmarkCost/", "aguistate", blue, nil, draw.CircleGlyph{}},
	{"BenchmarkCostFloor/", "floor: encoding/json + in-place edit", grey, []vg.Length{vg.Points(4), vg.Points(3)}, draw.SquareGlyph{}},
	{"BenchmarkReferenceCost/", "reference client (@ag-ui/client)", red, nil, draw.TriangleGlyph{}},
}

// deltaFigure draws one panel per row of BenchmarkCost, in a grid of two
// columns, and reports whether there was a row to draw.
func deltaFigure(res map[string]float64, path string) (bool, error) {
	var rows []string
	for name := range res {
		if rest, ok := strings.CutPrefix(name, "BenchmarkCost/"); ok {
			row, _, _ := strings.Cut(rest, "/")
			if !slices.Contains(rows, row) {
				rows = append(rows, row)
			}
		}
	}
	if len(rows) == 0 {
		return false, nil
	}
	order := slices.Collect(func(yield func(string) bool) {
		for _, r := range []string{"sections-replace", "wide-array-replace-score", "wide-object-add", "wide-object-remove", "list-insert-0", "deep-replace"} {
			if !yield(r) {
				return
			}
		}
	})
	slices.SortFunc(rows, func(a, b string) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		if ia < 0 || ib < 0 {
			return cmp.Compare(ib, ia) // unknown rows last
		}
		return cmp.Compare(ia, ib)
	})
	const cols = 2
	nrows := (len(rows) + cols - 1) / cols
	lo, hi := math.Inf(1), math.Inf(-1) // one y range for all panels
	for name, ns := range res {
		for _, s := range deltaSeries {
			if strings.HasPrefix(name, s.prefix) && slices.Contains(rows, rowOf(name, s.prefix)) {
				lo, hi = math.Min(lo, ns), math.Max(hi, ns)
			}
		}
	}
	plots := make([][]*plot.Plot, nrows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	var legend []legendEntry
	for k, row := range rows {
		p := plot.New()
		p.Title.Text = cmp.Or(rowTitles[row], row)
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.X.Label.Text = "state size"
		p.Y.Label.Text = "time per delta"
		logAxes(p, bytesTicks{}, timeTicks{})
		p.X.Min, p.X.Max = 700, 15<<20
		p.Y.Min, p.Y.Max = lo/2, hi*2
		for _, s := range deltaSeries {
			var xys plotter.XYs
			for name, sz := range sizes {
				if ns, ok := res[s.prefix+row+"/"+name]; ok {
					xys = append(xys, plotter.XY{X: sz, Y: ns})
				}
			}
			if len(xys) == 0 {
				continue
			}
			sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
			if err := addLine(p, s, xys, false); err != nil {
				return false, err
			}
			if !slices.ContainsFunc(legend, func(e legendEntry) bool { return e.label == s.label }) {
				legend = append(legend, legendEntry{s.label, s})
			}
		}
		plots[k/cols][k%cols] = p
	}
	for k := len(rows); k < nrows*cols; k++ { // an empty panel keeps the grid
		p := plot.New()
		p.HideAxes()
		plots[k/cols][k%cols] = p
	}
	const head = 1.1 * vg.Inch // the figure's title and legend
	width, height := 11*vg.Inch, vg.Length(nrows)*3.6*vg.Inch+head
	img := vgimg.New(width, height)
	whole := draw.New(img)
	drawHead(whole, "One STATE_DELTA of one operation, from its JSON text to the published state", legend)
	dc := draw.Crop(whole, 0, 0, 0, -head)
	tiles := draw.Tiles{Rows: nrows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6, PadTop: vg.Millimeter * 4, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	return true, writePNG(img, path)
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	label string
	s     series
}

// drawHead writes a figure's title at the top of c, and its legend below.
func drawHead(c draw.Canvas, title string, entries []legendEntry) {
	font := plot.DefaultFont
	font.Size = vg.Points(13)
	style := draw.TextStyle{Color: color.Black, Font: font, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	top := c.Max.Y - vg.Points(10)
	c.FillText(style, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top}, title)
	l := plot.NewLegend()
	l.TextStyle.Font.Size = vg.Points(11)
	for _, e := range entries {
		line := plotter.NewFunction(func(float64) float64 { return 0 })
		line.Color, line.Width, line.Dashes = e.s.color, vg.Points(1.8), e.s.dashes
		pts, _ := plotter.NewScatter(plotter.XYs{{}})
		pts.Color, pts.Shape, pts.Radius = e.s.color, e.s.shape, vg.Points(3.5)
		l.Add(e.label, line, pts)
	}
	l.Padding = vg.Points(5)
	l.Top, l.Left = true, true
	l.XOffs = vg.Inch * 0.9
	l.YOffs = -vg.Points(34)
	l.Draw(c)
}

// rowOf returns the row of a BenchmarkCost-like name after prefix.
func rowOf(name, prefix string) string {
	row, _, _ := strings.Cut(strings.TrimPrefix(name, prefix), "/")
	return row
}

var messageSeries = []series{
	{"text-content", "TEXT_MESSAGE_CONTENT", blue, nil, draw.CircleGlyph{}},
	{"tool-call-args", "TOOL_CALL_ARGS", orange, nil, draw.SquareGlyph{}},
	{"tool-result", "TOOL_CALL_RESULT", green, nil, draw.TriangleGlyph{}},
	{"messages-snapshot", "MESSAGES_SNAPSHOT restating the list", purple, nil, draw.PyramidGlyph{}},
	{"messages-snapshot-parse", "the parse of that snapshot's text alone", grey, []vg.Length{vg.Points(4), vg.Points(3)}, draw.CrossGlyph{}},
}

// messagesFigure draws the cost of each event of BenchmarkMessageEvents
// against the messages held, and reports whether there was one.
func messagesFigure(res map[string]float64, path string) (bool, error) {
	p := plot.New()
	p.X.Label.Text = "messages held"
	p.Y.Label.Text = "time per event"
	logAxes(p, countTicks{}, timeTicks{})
	drawn := false
	var legend []legendEntry
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range messageSeries {
		var xys plotter.XYs
		for name, ns := range res {
			rest, ok := strings.CutPrefix(name, "BenchmarkMessageEvents/"+s.prefix+"/messages=")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(rest)
			if err != nil {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(n), Y: ns})
			lo, hi = math.Min(lo, ns), math.Max(hi, ns)
		}
		if len(xys) == 0 {
			continue
		}
		drawn = true
		sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		if err := addLine(p, s, xys, false); err != nil {
			return false, err
		}
		legend = append(legend, legendEntry{s.label, s})
	}
	if !drawn {
		return false, nil
	}
	p.X.Min, p.X.Max = 60, 170_000
	p.Y.Min, p.Y.Max = lo/2, hi*2
	const head = 1.5 * vg.Inch
	img := vgimg.New(8.5*vg.Inch, 5.5*vg.Inch+head)
	whole := draw.New(img)
	drawHead(whole, "One message event, from its JSON text to the published view, against the messages held", legend)
	p.Draw(draw.Crop(whole, vg.Millimeter*2, -vg.Millimeter*4, vg.Millimeter*2, -head))
	return true, writePNG(img, path)
}

// addLine adds xys to p as a line with points, drawn as s says, and to the
// legend when legend is true.
func addLine(p *plot.Plot, s series, xys plotter.XYs, legend bool) error {
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = s.color, vg.Points(1.8), s.dashes
	pts.Color, pts.Shape, pts.Radius = s.color, s.shape, vg.Points(3.5)
	p.Add(l, pts)
	if legend {
		p.Legend.Add(s.label, l, pts)
	}
	return nil
}

// logAxes makes both axes of p logarithmic, with the tick labels given,
// and adds a grid.
func logAxes(p *plot.Plot, x, y plot.Ticker) {
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = x, y
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{0xdd}
	g.Horizontal.Color = color.Gray{0xdd}
	p.Add(g)
}

// decades returns the powers of ten from below min to above max.
func decades(min, max float64) []float64 {
	var out []float64
	for v := math.Pow(10, math.Floor(math.Log10(min))); v <= max*1.0001; v *= 10 {
		out = append(out, v)
	}
	return out
}

// timeTicks labels nanoseconds at each power of ten: 1 µs, 10 µs, ... 1 s.
type timeTicks struct{}

func (timeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range decades(min, max) {
		if v < min {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: duration(v)})
	}
	return ticks
}

func duration(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%g µs", ns/1e3)
	}
	return fmt.Sprintf("%g ns", ns)
}

// bytesTicks labels the state sizes: 1 KB, 10 KB, ... 10 MB (powers of
// 1024 times powers of ten, as BenchmarkCost names its sizes).
type bytesTicks struct{}

func (bytesTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, t := range []struct {
		v     float64
		label string
	}{{1 << 10, "1 KB"}, {10 << 10, "10 KB"}, {100 << 10, "100 KB"}, {1 << 20, "1 MB"}, {10 << 20, "10 MB"}} {
		if t.v >= min && t.v <= max {
			ticks = append(ticks, plot.Tick{Value: t.v, Label: t.label})
		}
	}
	return ticks
}

// countTicks labels counts at each power of ten: 100, 1,000, ...
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range decades(min, max) {
		if v < min {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: thousands(int(v))})
	}
	return ticks
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func writePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
