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
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/records"
)

// Policy is the part of the response policy (R20) that operators may change.
type Policy struct {
	// RetryClientErrors retries 4xx answers other than 408, 410, 425 and 429 by the normal
	// schedule; false makes them final.
	RetryClientErrors bool
	// MaxRetryAfter caps a receiver's Retry-After; zero means no cap.
	MaxRetryAfter time.Duration
}

// Failure is a failed attempt, its category carried as data (R19): callers branch on the
// fields, never on the message.
type Failure struct {
	// Category is one of the records.Category constants.
	Category string
	// Status is the HTTP status, or 0 when no response arrived.
	Status int
	// Retryable says the attempt may be made again by the schedule.
	Retryable bool
	// RetryAfter is the receiver's valid Retry-After, capped by Policy.MaxRetryAfter; zero when
	// there was none.
	RetryAfter time.Duration
	// ClientError marks a 4xx other than 408, 410, 425 and 429, whose Retryable the policy for
	// client errors decides (Policy.RetryClientErrors, or the endpoint's own).
	ClientError bool
	// Gone marks a 410: the receiver asked to stop, and the endpoint is to be disabled. The
	// recorder disables it on seeing the attempt's status 410.
	Gone bool
	// Err is the transport error; nil when the failure is an HTTP status.
	Err error
}

func (f *Failure) Error() string {
	if f.Err != nil {
		return fmt.Sprintf("sender: %s: %v", f.Category, f.Err)
	}
	return fmt.Sprintf("sender: %s: HTTP %d", f.Category, f.Status)
}

// Unwrap returns the transport error.
func (f *Failure) Unwrap() error { return f.Err }

// Classify applies the response policy of design.md section 7 (R19, R20) to the outcome of one
// request: resp when a response arrived, else the transport error err. It returns nil for a
// 2xx (delivered) and a *Failure otherwise:
//
//   - 410: final, Gone.
//   - 408, 425, 429, 5xx: retryable, honouring a valid Retry-After (delta seconds or HTTP date,
//     read at now; an invalid one is ignored).
//   - other 4xx: a persistent receiver error, retryable unless p.RetryClientErrors is off.
//   - 3xx: never followed (R27), category redirect, retryable.
//   - transport errors: dns, connection_refused, connection_reset (the receiver reset or closed
//     the connection before answering), timeout, tls, invalid_response (an answer that is not
//     HTTP, or headers past the limit), blocked_destination, or internal for anything else; all
//     retryable.
//
// A response that is not 2xx has category http_status unless said otherwise.
func Classify(resp *http.Response, err error, now time.Time, p Policy) *Failure {
	if resp == nil {
		if err == nil {
			err = errors.New("no response and no error")
		}
		return &Failure{Category: classifyError(err), Retryable: true, Err: err}
	}
	status := resp.StatusCode
	switch {
	case status >= 200 && status <= 299:
		return nil
	case status == http.StatusGone:
		return &Failure{Category: records.CategoryHTTPStatus, Status: status, Gone: true}
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly,
		status == http.StatusTooManyRequests, status >= 500 && status <= 599:
		f := &Failure{Category: records.CategoryHTTPStatus, Status: status, Retryable: true}
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			if p.MaxRetryAfter > 0 && d > p.MaxRetryAfter {
				d = p.MaxRetryAfter
			}
			f.RetryAfter = d
		}
		return f
	case status >= 300 && status <= 399:
		return &Failure{Category: records.CategoryRedirect, Status: status, Retryable: true}
	case status >= 400 && status <= 499:
		return &Failure{Category: records.CategoryHTTPStatus, Status: status, Retryable: p.RetryClientErrors, ClientError: true}
	default: // 1xx as a final answer, or outside the HTTP range
		return &Failure{Category: records.CategoryHTTPStatus, Status: status, Retryable: true}
	}
}

// classifyError maps a transport error to its category. Order matters: an egress refusal and a
// DNS failure are named before the generic timeout test, since both can carry timeouts.
func classifyError(err error) string {
	var (
		dnsErr   *net.DNSError
		proxyErr *egress.ProxyError
	)
	switch {
	case errors.Is(err, egress.ErrBlockedDestination):
		return records.CategoryBlockedDestination
	case errors.As(err, &dnsErr):
		return records.CategoryDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return records.CategoryConnectionRefused
	case errors.As(err, &proxyErr):
		// The forward proxy could not open a tunnel to the checked address (504: in time).
		if proxyErr.Timeout() {
			return records.CategoryTimeout
		}
		return records.CategoryConnectionRefused
	case isTimeout(err):
		return records.CategoryTimeout
	case isTLS(err):
		return records.CategoryTLS
	case isReset(err):
		return records.CategoryConnectionReset
	case isInvalidResponse(err):
		return records.CategoryInvalidResponse
	default:
		return records.CategoryInternal
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isReset reports a connection the receiver reset or closed before its answer was complete.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// invalidResponseMessages are net/http's own words for an answer it refused to read, which it
// returns as untyped errors: response headers past Transport.MaxResponseHeaderBytes (HTTP/1 and
// HTTP/2) and a status line or header that is not HTTP.
var invalidResponseMessages = []string{
	"server response headers exceeded",
	"response header list larger than advertised limit",
	"malformed HTTP",
	"invalid header field",
	"invalid Trailer",
	"bogus greeting",
}

// isInvalidResponse reports an answer that arrived but is not HTTP that can be read: the
// receiver's fault, not the network's nor hookstream's.
func isInvalidResponse(err error) bool {
	var proto textproto.ProtocolError
	if errors.As(err, &proto) {
		return true
	}
	msg := err.Error()
	for _, m := range invalidResponseMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

func isTLS(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		systemRoots      x509.SystemRootsError
		constraint       x509.ConstraintViolationError
		critical         x509.UnhandledCriticalExtension
		insecure         x509.InsecureAlgorithmError
		verification     *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
		alert            tls.AlertError
		echRejected      *tls.ECHRejectionError
	)
	// An alert from the peer, such as a receiver refusing our client certificate, arrives as
	// a *net.OpError "remote error" around crypto/tls's unexported alert type.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return true
	}
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &systemRoots) || errors.As(err, &constraint) || errors.As(err, &critical) ||
		errors.As(err, &insecure) || errors.As(err, &verification) || errors.As(err, &recordHeader) ||
		errors.As(err, &alert) || errors.As(err, &echRejected)
}

// maxRetryAfterSeconds keeps a delta far from overflowing time.Duration.
const maxRetryAfterSeconds = 100 * 365 * 24 * 3600

// ParseRetryAfter reads a Retry-After value (RFC 9110 section 10.2.3): delta seconds (digits
// only) or an HTTP date, taken relative to now. A date in the past is valid and means no wait
// (0, true). Anything else is invalid (0, false) and must be ignored.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > maxRetryAfterSeconds {
			n = maxRetryAfterSeconds // only a range error is possible: a huge delta
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}
