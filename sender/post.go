package sender

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/tracing"
	"github.com/hookstream/hookstream/webhook"
)

// poster makes one signed request and classifies its outcome. It knows nothing of Kafka, so
// the classification rules can be tested against real local servers on their own.
type poster struct {
	userAgent   string
	policy      Policy
	maxResponse int64
	now         func() time.Time
}

// evidenceBuffers hold the start of a response, which the excerpt is cut from (redactWindow
// bytes); the rest, up to maxResponse, is read and dropped so that the connection is reused.
var evidenceBuffers = sync.Pool{New: func() any { b := make([]byte, redactWindow); return &b }}

// result is the evidence of one request (design.md section 7).
type result struct {
	started time.Time
	latency time.Duration
	status  int
	failure *Failure // nil: delivered
	excerpt string
	// abandoned: ctx ended (shutdown or revoke) before the outcome was known. The attempt is
	// not reported and its record not committed; the next owner makes it again.
	abandoned bool
	// traceparent is the context of the attempt's span; "" when tracing is off.
	traceparent string
	// circuit and circuitProbeAt are the endpoint's circuit after the attempt, for its record.
	circuit                   string
	circuitProbeAt, circuitAt *time.Time
}

// post sends body to target, signed with signer for message msgID at the attempt time (R15),
// with the endpoint's headers and credentials and over its client (acc). The body is sent as
// given, byte for byte: the signature covers exactly these bytes. A receiver that answers 401
// to an OAuth token gets the request once more with a fresh token (the same attempt).
func (p *poster) post(ctx context.Context, target string, signer *webhook.Signer, msgID string, body []byte, acc *access) result {
	started := p.now()
	res := result{started: started}
	var (
		resp  *http.Response
		err   error
		token string
	)
	for try := 0; ; try++ {
		var req *http.Request
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			// A URL that does not even parse: the endpoint is misconfigured, not the network.
			res.failure = &Failure{Category: records.CategoryInternal, Retryable: true, Err: errors.New("endpoint URL does not parse")}
			res.excerpt = "not sent: endpoint URL does not parse"
			return res
		}
		// The endpoint's headers first, so that none can replace the ones below (the admin
		// API refuses reserved names; this holds whatever a record says).
		for name, values := range acc.headers {
			req.Header[name] = values
		}
		if acc.creds != nil {
			if token, err = acc.creds.authorize(ctx, req, token); err != nil {
				return p.notAuthorized(ctx, res, err, acc)
			}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", p.userAgent)
		signer.SetHeaders(req.Header, msgID, started, body)
		tracing.InjectHTTP(ctx, req.Header) // the attempt's span, when tracing is on

		resp, err = acc.client.Do(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized || token == "" || try > 0 {
			break
		}
		// The receiver refused the token (revoked, or its lifetime was shorter than said):
		// once more with a new one.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, p.maxResponse))
		_ = resp.Body.Close()
	}
	if err != nil {
		res.latency = time.Since(started)
		if ctx.Err() != nil {
			res.abandoned = true
			return res
		}
		res.failure = Classify(nil, err, p.now(), p.policy)
		res.excerpt = excerpt(redactKnown([]byte(transportMessage(err)), acc.evidenceSecrets(token)...))
		return res
	}
	// Read up to the limit so the connection can be reused; a longer body is cut and the
	// connection closed. A 2xx stays delivered even if reading its body fails: the status line
	// is the receiver's answer (design.md section 1).
	buf := evidenceBuffers.Get().(*[]byte)
	defer evidenceBuffers.Put(buf)
	n, _ := io.ReadFull(resp.Body, (*buf)[:min(int64(len(*buf)), p.maxResponse)])
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, p.maxResponse-int64(n)))
	_ = resp.Body.Close()
	data := (*buf)[:n]
	res.latency = time.Since(started)
	res.status = resp.StatusCode
	res.failure = Classify(resp, nil, p.now(), p.policy)
	if res.failure != nil && res.failure.Category == records.CategoryRedirect {
		if loc := resp.Header.Get("Location"); loc != "" {
			data = append([]byte("location: "+loc+"\n"), data...)
		}
	}
	res.excerpt = excerpt(redactKnown(data, acc.evidenceSecrets(token)...))
	return res
}

// notAuthorized is the result of an attempt whose credentials could not be had: the token
// request failed, so no webhook was sent. Its category is the token request's (a network
// category, or http_status with the token endpoint's status in the excerpt only: the attempt's
// status is the receiver's, and the receiver was not asked).
func (p *poster) notAuthorized(ctx context.Context, res result, err error, acc *access) result {
	res.latency = time.Since(res.started)
	if ctx.Err() != nil {
		res.abandoned = true
		return res
	}
	msg := "not sent: " + err.Error()
	category := classifyError(err)
	var te *tokenError
	if errors.As(err, &te) && te.status != 0 {
		category = records.CategoryHTTPStatus
		if len(te.excerpt) > 0 {
			msg += ": " + string(te.excerpt)
		}
	}
	res.failure = &Failure{Category: category, Retryable: true, Err: err}
	res.excerpt = excerpt(redactKnown([]byte(msg), acc.evidenceSecrets("")...))
	return res
}

// evidenceSecrets are the values redacted from this request's evidence by value.
func (a *access) evidenceSecrets(token string) []string {
	if token == "" {
		return a.secrets
	}
	return append(slices.Clip(a.secrets), token)
}

// transportMessage is the error without the *url.Error wrapper, whose message repeats the
// endpoint URL (and any token in its query) and adds nothing to the evidence.
func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
