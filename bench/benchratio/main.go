// Command benchratio summarises `go test -bench` output read from stdin: the median of each
// benchmark's rate metric over its runs, and for every pair named <x>/sender and <x>/bare_loop
// the ratio of their medians. `make bench-sender` pipes interleaved rounds of the sender's
// throughput benchmark into it, so both sides of each ratio ran in the same command, turn by
// turn, on the same (noisy, shared) machine.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/hookstream/hookstream/internal/testkit/benchenv"
)

func main() {
	unit := flag.String("unit", "deliveries/s", "the metric to summarise")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *unit); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// A result line: "BenchmarkThroughput/http/sender-2   40000   23187 deliveries/s ...".
var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func run(in io.Reader, out io.Writer, unit string) error {
	runs := map[string][]float64{}
	var names []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		fields := strings.Fields(m[2])
		for i := 1; i < len(fields); i++ {
			if fields[i] != unit {
				continue
			}
			v, err := strconv.ParseFloat(fields[i-1], 64)
			if err != nil {
				return fmt.Errorf("%q: %w", sc.Text(), err)
			}
			if _, seen := runs[m[1]]; !seen {
				names = append(names, m[1])
			}
			runs[m[1]] = append(runs[m[1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no results with unit %s", unit)
	}
	fmt.Fprintf(out, "\n%-44s %6s %14s   %s\n", "benchmark", "runs", "median "+unit, "all runs")
	for _, n := range names {
		v := runs[n]
		all := make([]string, len(v))
		for i, x := range v {
			all[i] = strconv.FormatFloat(x, 'f', 0, 64)
		}
		fmt.Fprintf(out, "%-44s %6d %14.0f   %s\n", n, len(v), benchenv.Median(v), strings.Join(all, " "))
	}
	for _, n := range names {
		prefix, ok := strings.CutSuffix(n, "/sender")
		bare, found := runs[prefix+"/bare_loop"]
		if !ok || !found {
			continue
		}
		ratio := benchenv.Median(runs[n]) / benchenv.Median(bare)
		fmt.Fprintf(out, "%-44s sender/bare_loop = %.2f\n", prefix, ratio)
	}
	return nil
}
