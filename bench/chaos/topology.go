package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hookstream/hookstream/internal/ledger"
	"github.com/hookstream/hookstream/internal/testkit/harness"
)

// Behaviours of the receivers.
const (
	behaveNormal      = "normal"       // 200, but for the run's failure share (500 or a timeout)
	behaveDown        = "down"         // normal, and its listener closed for a while mid-run
	behaveRateLimited = "rate-limited" // normal, and 429 with Retry-After to rateLimitedShare of requests
	behaveGone        = "gone"         // 410 to everything: hookstream must disable it
)

// rateLimitedShare is the share of requests the rate-limited receiver answers 429: with its
// 10 % failures, a fifth of its requests fail, so one in 10⁷ needs 10 attempts (57 s of the
// schedule) and the drain after the load stays within its bound.
const rateLimitedShare = 0.1

// endpointSpec is one endpoint of the topology.
type endpointSpec struct {
	partner string
	types   []string
	behave  string
}

// partnerSpec is one partner and the share of the load's events that are its.
type partnerSpec struct {
	id     string
	weight float64
}

// The topology: 4 partners, 9 endpoints, exact, prefix and `*` subscriptions, some types not
// subscribed to. With these weights an event reaches 2.92 endpoints on average (p1 4, p2 1.6,
// p3 2 then 1 once the 410 endpoint is disabled, p4 1).
var (
	partners = []partnerSpec{{"p1", 0.6}, {"p2", 0.2}, {"p3", 0.1}, {"p4", 0.1}}
	topology = []endpointSpec{
		{"p1", []string{"*"}, behaveDown},
		{"p1", []string{"api_key.*", "customer.*", "balance.*", "usage.*", "budget.*"}, behaveNormal},
		{"p1", []string{"*"}, behaveRateLimited},
		{"p1", loadTypes, behaveNormal},
		{"p2", []string{"*"}, behaveNormal},
		{"p2", []string{"api_key.*", "customer.created", "balance.*"}, behaveNormal},
		{"p3", []string{"*"}, behaveNormal},
		{"p3", []string{"api_key.*", "customer.*", "balance.*", "usage.*", "budget.*"}, behaveGone},
		{"p4", []string{"*"}, behaveNormal},
	}
)

// endpoint is one created endpoint with its receiver.
type endpoint struct {
	endpointSpec
	id string
	rx *harness.Receiver // its own listener, so one can be down alone
}

// healthy says whether the endpoint's latency counts as a healthy endpoint's.
func (ep *endpoint) healthy() bool { return ep.behave == behaveNormal }

// receipts collects every receiver's records, in memory for the ledger and as JSON lines for
// `hookstream verify-ledger -receipts`.
type receipts struct {
	path string
	mu   sync.Mutex
	all  []ledger.Receipt
	file *os.File
	buf  *bufio.Writer
	out  *json.Encoder
	errs int // records that could not be written
}

// newReceipts opens the receipts file at path.
func newReceipts(path string) (*receipts, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("receipts: %w", err)
	}
	buf := bufio.NewWriterSize(f, 1<<20)
	return &receipts{path: path, file: f, buf: buf, out: json.NewEncoder(buf)}, nil
}

func (r *receipts) add(rc ledger.Receipt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rc)
	if err := r.out.Encode(rc); err != nil {
		r.errs++
	}
}

// snapshot copies the records so far, and flushes the file.
func (r *receipts) snapshot() []ledger.Receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.buf.Flush(); err != nil {
		r.errs++
	}
	return append([]ledger.Receipt(nil), r.all...)
}

// close flushes and closes the file.
func (r *receipts) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.buf.Flush(), r.file.Close())
}

// failures decides the answers of a normal endpoint: share of requests fail, timeouts of
// them by holding the request for hold (past the sender's deadline, -request-timeout), the others with 500.
type failures struct {
	share    float64
	timeouts float64 // the share of failures that are timeouts
	hold     time.Duration
	mu       sync.Mutex
	rng      *rand.Rand
}

func (f *failures) roll() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64()
}

// responder is the endpoint's answer policy.
func (f *failures) responder(behave string) harness.Responder {
	return func(*harness.Request) harness.Answer {
		if behave == behaveGone {
			return harness.Answer{Status: http.StatusGone}
		}
		r := f.roll()
		switch {
		case r < f.share*f.timeouts:
			return harness.Answer{Status: http.StatusServiceUnavailable, Hold: f.hold}
		case r < f.share:
			return harness.Answer{Status: http.StatusInternalServerError}
		case behave == behaveRateLimited && r < f.share+rateLimitedShare:
			return harness.Answer{Status: http.StatusTooManyRequests, RetryAfter: "1"}
		}
		return harness.Answer{Status: http.StatusOK}
	}
}

// createTopology creates the partners and endpoints through the admin API, each endpoint on a
// receiver of its own that verifies with the secret the API returned and records every request.
func createTopology(ctx context.Context, admin *harness.AdminClient, f *failures, rec *receipts) ([]*endpoint, error) {
	for _, p := range partners {
		if err := admin.CreatePartner(ctx, p.id); err != nil {
			return nil, err
		}
	}
	var eps []*endpoint
	for _, spec := range topology {
		ep, err := createEndpoint(ctx, admin, spec, f, rec)
		if err != nil {
			for _, e := range eps {
				e.rx.Close()
			}
			return nil, err
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

func createEndpoint(ctx context.Context, admin *harness.AdminClient, spec endpointSpec, f *failures, rec *receipts) (*endpoint, error) {
	rx, err := harness.StartReceiver()
	if err != nil {
		return nil, err
	}
	n, url := rx.AddEndpoint()
	id, secret, err := admin.CreateEndpoint(ctx, spec.partner, url, spec.types)
	if err != nil {
		rx.Close()
		return nil, err
	}
	ep := &endpoint{endpointSpec: spec, id: id, rx: rx}
	rxEP := rx.Endpoint(n)
	if err := rxEP.SetSecret(secret); err != nil {
		rx.Close()
		return nil, err
	}
	rxEP.SetResponder(f.responder(spec.behave))
	rxEP.SetObserver(func(r harness.Request) { rec.add(ep.receipt(r)) })
	return ep, nil
}

// receipt turns what the receiver saw into the ledger's record, reading the envelope's id and
// type from the body.
func (ep *endpoint) receipt(r harness.Request) ledger.Receipt {
	var env struct {
		EventID string `json:"event_id"`
		Type    string `json:"type"`
	}
	_ = json.Unmarshal(r.Body, &env) // a body that is not an envelope leaves them empty: counted as a mismatch
	return ledger.Receipt{EventID: env.EventID, EndpointID: ep.id, PartnerID: ep.partner, WebhookID: r.WebhookID,
		ReceivedAt: r.ReceivedAt, Verified: r.Verified, Status: r.Status, Type: env.Type}
}

// String names the endpoint in the report.
func (ep *endpoint) String() string { return fmt.Sprintf("%s (%s, %s)", ep.id, ep.partner, ep.behave) }
