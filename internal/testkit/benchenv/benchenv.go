// Package benchenv is what the benchmark programs share beyond scratch (their fresh
// databases, slot waits and random names, the same as the tests'): free ports and the median they
// report.
package benchenv

import (
	"flag"
	"fmt"
	"net"
	"slices"
)

// ServerFlags defines, on the command line's flag set, the flags of a benchmark that runs
// against a PostgreSQL server and Kafka brokers: -database-url, -brokers (comma-separated) and
// -runs.
func ServerFlags() (databaseURL, brokers *string, runs *int) {
	return flag.String("database-url", "postgres://postgres@127.0.0.1:54329/hookstream?sslmode=disable", "PostgreSQL server (a database is created per run)"),
		flag.String("brokers", "127.0.0.1:19092", "Kafka brokers"),
		flag.Int("runs", 3, "runs")
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Median of v (the upper one for an even count).
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
