package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	in := `goos: linux
BenchmarkThroughput/http/sender-2         	   40000	     20000 deliveries/s	         0 ns/op
BenchmarkThroughput/http/bare_loop-2      	   40000	     30000 deliveries/s	         0 ns/op
BenchmarkThroughput/http/sender-2         	   40000	     24000 deliveries/s	         0 ns/op
BenchmarkThroughput/http/bare_loop-2      	   40000	     25000 deliveries/s	         0 ns/op
BenchmarkThroughput/http/sender-2         	   40000	     22000 deliveries/s	         0 ns/op
BenchmarkThroughput/http/bare_loop-2      	   40000	     32000 deliveries/s	         0 ns/op
BenchmarkIsolation/healthy_only-2          	    3000	         1.5 p50-ms	         9.0 p99-ms
PASS
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out, "deliveries/s"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"BenchmarkThroughput/http/sender                   3          22000   20000 24000 22000",
		"BenchmarkThroughput/http/bare_loop                3          30000   30000 25000 32000",
		"BenchmarkThroughput/http                     sender/bare_loop = 0.73",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(strings.NewReader("PASS\n"), &out, "deliveries/s"); err == nil {
		t.Error("no results: no error")
	}
}
