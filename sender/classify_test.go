package sender

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func response(status int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: status, Header: h}
}

// The response policy of R20 and the categories of R19, rule by rule.
func TestClassifyResponses(t *testing.T) {
	retry := Policy{RetryClientErrors: true, MaxRetryAfter: time.Hour}
	stop := Policy{RetryClientErrors: false, MaxRetryAfter: time.Hour}
	tests := []struct {
		name       string
		resp       *http.Response
		policy     Policy
		delivered  bool
		category   string
		retryable  bool
		gone       bool
		retryAfter time.Duration
	}{
		{"200", response(200, ""), retry, true, "", false, false, 0},
		{"204", response(204, ""), retry, true, "", false, false, 0},
		{"299", response(299, ""), retry, true, "", false, false, 0},
		{"301", response(301, ""), retry, false, records.CategoryRedirect, true, false, 0},
		{"302 ignores retry-after", response(302, "5"), retry, false, records.CategoryRedirect, true, false, 0},
		{"308", response(308, ""), retry, false, records.CategoryRedirect, true, false, 0},
		{"400 retried by default", response(400, ""), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"404 retried by default", response(404, ""), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"400 final when configured", response(400, ""), stop, false, records.CategoryHTTPStatus, false, false, 0},
		{"401 final when configured", response(401, "3"), stop, false, records.CategoryHTTPStatus, false, false, 0},
		{"408", response(408, ""), stop, false, records.CategoryHTTPStatus, true, false, 0},
		{"408 with retry-after", response(408, "7"), stop, false, records.CategoryHTTPStatus, true, false, 7 * time.Second},
		{"410 disables", response(410, ""), retry, false, records.CategoryHTTPStatus, false, true, 0},
		{"410 ignores retry-after", response(410, "10"), retry, false, records.CategoryHTTPStatus, false, true, 0},
		{"425", response(425, "1"), stop, false, records.CategoryHTTPStatus, true, false, time.Second},
		{"429", response(429, ""), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"429 retry-after seconds", response(429, "2"), retry, false, records.CategoryHTTPStatus, true, false, 2 * time.Second},
		{"429 retry-after date", response(429, now.Add(90*time.Second).Format(http.TimeFormat)), retry, false, records.CategoryHTTPStatus, true, false, 90 * time.Second},
		{"429 retry-after past date", response(429, now.Add(-time.Minute).Format(http.TimeFormat)), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"429 invalid retry-after ignored", response(429, "soon"), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"429 negative retry-after ignored", response(429, "-5"), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"429 fractional retry-after ignored", response(429, "1.5"), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"429 retry-after capped", response(429, "86400"), retry, false, records.CategoryHTTPStatus, true, false, time.Hour},
		{"500", response(500, ""), stop, false, records.CategoryHTTPStatus, true, false, 0},
		{"503 retry-after", response(503, "120"), retry, false, records.CategoryHTTPStatus, true, false, 2 * time.Minute},
		{"599", response(599, ""), retry, false, records.CategoryHTTPStatus, true, false, 0},
		{"1xx as final", response(103, ""), retry, false, records.CategoryHTTPStatus, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Classify(tt.resp, nil, now, tt.policy)
			if tt.delivered {
				if f != nil {
					t.Fatalf("Classify = %+v, want delivered", f)
				}
				return
			}
			if f == nil {
				t.Fatal("Classify = delivered")
			}
			if f.Category != tt.category || f.Retryable != tt.retryable || f.Gone != tt.gone ||
				f.RetryAfter != tt.retryAfter || f.Status != tt.resp.StatusCode {
				t.Fatalf("Classify = %+v, want category %s retryable %v gone %v retryAfter %s",
					f, tt.category, tt.retryable, tt.gone, tt.retryAfter)
			}
		})
	}
}

func TestClassifyTransportErrors(t *testing.T) {
	dnsErr := &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://x.example/hook", Err: err}
	}
	tests := []struct {
		name     string
		err      error
		category string
	}{
		{"dns", wrap(&net.OpError{Op: "dial", Err: dnsErr}), records.CategoryDNS},
		{"dns via egress resolve rule", wrap(fmt.Errorf("egress: dial: %w", &egress.PolicyError{Rule: egress.RuleResolve, Err: dnsErr})), records.CategoryDNS},
		{"dns timeout is dns", wrap(&net.DNSError{Err: "timeout", IsTimeout: true}), records.CategoryDNS},
		{"refused", wrap(&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), records.CategoryConnectionRefused},
		{"refused inside a join", wrap(fmt.Errorf("egress: dial: %w", errors.Join(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}))), records.CategoryConnectionRefused},
		{"deadline", wrap(context.DeadlineExceeded), records.CategoryTimeout},
		{"os deadline", wrap(os.ErrDeadlineExceeded), records.CategoryTimeout},
		{"net timeout", wrap(&net.OpError{Op: "read", Err: timeoutErr{}}), records.CategoryTimeout},
		{"unknown authority", wrap(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), records.CategoryTLS},
		{"hostname", wrap(x509.HostnameError{Host: "x.example", Certificate: &x509.Certificate{}}), records.CategoryTLS},
		{"expired", wrap(x509.CertificateInvalidError{Reason: x509.Expired}), records.CategoryTLS},
		{"alert", wrap(tls.AlertError(40)), records.CategoryTLS},
		{"not tls", wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), records.CategoryTLS},
		{"blocked", wrap(fmt.Errorf("egress: dial: %w", &egress.PolicyError{Rule: egress.RuleBlockedAddress, Detail: "10.0.0.1 is private"})), records.CategoryBlockedDestination},
		{"blocked port", wrap(&egress.PolicyError{Rule: egress.RulePort}), records.CategoryBlockedDestination},
		{"reset", wrap(&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), records.CategoryConnectionReset},
		{"broken pipe", wrap(&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}), records.CategoryConnectionReset},
		{"closed without an answer", wrap(io.EOF), records.CategoryConnectionReset},
		{"malformed header", wrap(textproto.ProtocolError("malformed MIME header line: x")), records.CategoryInvalidResponse},
		{"other", errors.New("something else"), records.CategoryInternal},
		{"nil everything", nil, records.CategoryInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Classify(nil, tt.err, now, Policy{})
			if f == nil || f.Category != tt.category || !f.Retryable || f.Status != 0 {
				t.Fatalf("Classify(%v) = %+v, want retryable %s", tt.err, f, tt.category)
			}
			var target *Failure
			if !errors.As(error(f), &target) || target.Category != tt.category {
				t.Fatal("the category is not reachable as data through errors.As")
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{" 30 ", 30 * time.Second, true},
		{"99999999999999999999999", 100 * 365 * 24 * time.Hour, true},
		{now.Add(time.Hour).Format(http.TimeFormat), time.Hour, true},
		{now.Add(time.Hour).Format(time.RFC850), time.Hour, true},
		{now.Add(time.Hour).Format(time.ANSIC), time.Hour, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5", 0, false},
		{"1s", 0, false},
		{"0x10", 0, false},
		{"tomorrow", 0, false},
		{"2026-03-01T12:00:00Z", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"2", "Sun, 01 Mar 2026 12:00:00 GMT", "-1", "1e9", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryAfter(s, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %s, %v", s, d, ok)
		}
	})
}
