package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/sender"
)

// version names this build when its build information has no module version, as for a binary
// built from a checkout without VCS stamping: -ldflags "-X main.version=…" sets it.
var version string

// build is what the binary knows of how it was built; "unknown" where it knows nothing.
type build struct {
	Version    string // the module version, e.g. v1.2.0 or a pseudo-version of the commit
	Revision   string // the VCS commit
	CommitTime string // the commit's time (RFC 3339)
	Modified   string // "true" when the work tree had uncommitted changes
	GoVersion  string
	Platform   string
}

// thisBuild is the build of the running binary.
func thisBuild() build {
	info, _ := debug.ReadBuildInfo() // nil without build information: every field unknown
	return buildOf(info, version)
}

// buildOf reads info, falling back to ldflagsVersion for a module version of "(devel)" or none.
func buildOf(info *debug.BuildInfo, ldflagsVersion string) build {
	b := build{Version: "(devel)", Revision: "unknown", CommitTime: "unknown", Modified: "unknown",
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if ldflagsVersion != "" {
		b.Version = ldflagsVersion
	}
	if info == nil {
		return b
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	if info.GoVersion != "" {
		b.GoVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value
		}
	}
	return b
}

func (b build) print(w io.Writer) {
	fmt.Fprintf(w, "hookstream %s\n", b.Version)
	fmt.Fprintf(w, "  revision:    %s\n", b.Revision)
	fmt.Fprintf(w, "  commit time: %s\n", b.CommitTime)
	fmt.Fprintf(w, "  modified:    %s\n", b.Modified)
	fmt.Fprintf(w, "  go:          %s %s\n", b.GoVersion, b.Platform)
}

// userAgent names this build in the sender's requests: hookstream/<version>, or sender's default
// for a build without a version ("(devel)" is no valid product version).
func (b build) userAgent() string {
	if b.Version == "(devel)" {
		return sender.DefaultUserAgent
	}
	return "hookstream/" + b.Version
}

// runVersion is `hookstream version` and `hookstream --version`.
func runVersion(_ context.Context, args []string, out io.Writer) error {
	if _, err := flagsOf("version").parse(args, out); err != nil {
		return err
	}
	thisBuild().print(out)
	return nil
}

// newRegistry is the registry a command serves at /metrics: the runtime collectors and
// hookstream_build_info, so a scrape tells which build each process runs.
func newRegistry() *prometheus.Registry {
	reg := metrics.NewRegistry()
	b := thisBuild()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace:   metrics.Namespace,
		Name:        "build_info",
		Help:        "Always 1; the labels name the build of this process.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion},
	}, func() float64 { return 1 }))
	return reg
}
