package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotPath is where the latency plot of res's workload and mode goes.
func plotPath(dir string, res *result) string {
	return filepath.Join(dir, fmt.Sprintf("latency-%s-%s.png", res.workload, res.mode))
}

// lastRunResults are, per workload and mode, the result of the last run: the one plotted.
func (r *report) lastRunResults() []*result {
	var out []*result
	for _, res := range r.results {
		i := slices.IndexFunc(out, func(o *result) bool { return o.workload == res.workload && o.mode == res.mode })
		if i < 0 {
			out = append(out, res)
		} else if res.run > out[i].run {
			out[i] = res
		}
	}
	return out
}

// writePlots draws one PNG per workload and mode.
func (r *report) writePlots(dir string) error {
	for _, res := range r.lastRunResults() {
		if err := plotLatency(res, r.o.runs, plotPath(dir, res)); err != nil {
			return fmt.Errorf("plot %s %s: %w", res.workload, res.mode, err)
		}
	}
	return nil
}

// maxScatter bounds the points drawn per series; more are thinned evenly.
const maxScatter = 20000

// plotLatency draws commit-to-receipt latency over commit time on a log scale: every delivery
// as a dot (thinned to maxScatter per series), and per series the p50 and p99 lines over
// fifty time buckets.
func plotLatency(res *result, runs int, path string) (err error) {
	// gonum/plot panics on some degenerate axes; that must not end the benchmark.
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("gonum/plot: %v", v)
		}
	}()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, mode %s, run %d of %d: commit-to-receipt latency", res.workload, res.mode, res.run, runs)
	p.X.Label.Text = "commit time since the first commit (s)"
	p.Y.Label.Text = "latency (ms)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	names := make([]string, 0, len(res.points))
	for name := range res.points {
		names = append(names, name)
	}
	slices.Sort(names)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, name := range names {
		pts := res.points[name]
		if len(pts) == 0 {
			continue
		}
		dots := thin(pts)
		for _, xy := range dots {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
		if err := addSeries(p, name, i, dots, pts); err != nil {
			return err
		}
	}
	if math.IsInf(lo, 0) {
		p.Title.Text += " (nothing received)"
		lo, hi = 1, 10
	}
	p.Y.Min, p.Y.Max = lo/2, hi*10 // room for the legend above the data
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}

// addSeries draws one series' dots and its p50 and p99 lines in the series' color.
func addSeries(p *plot.Plot, name string, i int, dots plotter.XYs, pts []point) error {
	sc, err := plotter.NewScatter(dots)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = plotutil.Color(i), vg.Points(0.8), draw.CircleGlyph{}
	p.Add(sc)
	p.Legend.Add(name, sc)
	for j, q := range []float64{50, 99} {
		xy := bucketed(pts, q)
		if len(xy) < 2 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = plotutil.Color(i), vg.Points(1.5), plotutil.Dashes(j)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s p%.0f", name, q), l)
	}
	return nil
}

// floor is the lowest latency drawn: the log scale cannot show zero or less.
const floor = 0.1

// thin returns at most maxScatter of pts, evenly spread, as plot points.
func thin(pts []point) plotter.XYs {
	step := max(1, len(pts)/maxScatter)
	out := make(plotter.XYs, 0, len(pts)/step+1)
	for i := 0; i < len(pts); i += step {
		out = append(out, plotter.XY{X: pts[i].x, Y: max(pts[i].y, floor)})
	}
	return out
}

// bucketed splits the commit-time span of pts into fifty buckets and returns the q-th
// percentile latency of each non-empty one, at its middle.
func bucketed(pts []point, q float64) plotter.XYs {
	span := 0.0
	for _, pt := range pts {
		span = max(span, pt.x)
	}
	width := max(span/50, 0.001)
	buckets := map[int][]float64{}
	for _, pt := range pts {
		b := int(pt.x / width)
		buckets[b] = append(buckets[b], max(pt.y, floor))
	}
	keys := make([]int, 0, len(buckets))
	for b := range buckets {
		keys = append(keys, b)
	}
	slices.Sort(keys)
	out := make(plotter.XYs, 0, len(keys))
	for _, b := range keys {
		v := buckets[b]
		slices.Sort(v)
		out = append(out, plotter.XY{X: (float64(b) + 0.5) * width, Y: percentile(v, q)})
	}
	return out
}
