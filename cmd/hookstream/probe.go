package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// errProbeFailed is a probe whose route did not answer 2xx in time: the process exits 1, what
// Docker's HEALTHCHECK reads as unhealthy (it reserves 2).
var errProbeFailed = errors.New("probe failed")

const probeUsage = `usage: hookstream probe <url> [flags]

GETs <url>, e.g. http://127.0.0.1:9464/readyz, and exits 0 when it answers 2xx within
--timeout, 1 otherwise, printing the status and the start of the body. For health checks where
the image has no shell and no curl (the hookstream image has only the binary): compose's
healthcheck runs ["/hookstream", "probe", "http://127.0.0.1:9464/readyz"].
`

// probeBodyLimit is how much of the answer probe prints: /readyz names each failing check in it.
const probeBodyLimit = 512

// runProbe is `hookstream probe <url>`.
func runProbe(ctx context.Context, args []string, out io.Writer) error {
	fs := flagsOf("probe")
	fs.usage = probeUsage
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the whole answer")
	_, rest, err := fs.parseWithArgs(args, out, 1)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return &usageError{err: errors.New("probe: want a URL, e.g. http://127.0.0.1:9464/readyz"), help: probeUsage}
	}
	u, err := url.Parse(rest[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &usageError{err: fmt.Errorf("probe: %q is no http(s) URL", rest[0]), help: probeUsage}
	}
	if *timeout <= 0 {
		return &usageError{err: fmt.Errorf("probe: --timeout %s: want a positive duration", *timeout), help: probeUsage}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return &usageError{err: fmt.Errorf("probe: %w", err), help: probeUsage}
	}
	// A probe asks the route itself: a redirect is an answer, not one to follow.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: GET %s: %v", errProbeFailed, u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
	if err != nil {
		return fmt.Errorf("%w: GET %s: %s, reading the body: %v", errProbeFailed, u.Redacted(), resp.Status, err)
	}
	line := resp.Status
	if b := strings.TrimSpace(string(body)); b != "" {
		line += " " + strings.ToValidUTF8(b, "?")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%w: GET %s: %s", errProbeFailed, u.Redacted(), line)
	}
	fmt.Fprintln(out, line)
	return nil
}
