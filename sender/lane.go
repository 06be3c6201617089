package sender

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/webhook"
)

// work is one delivery record on its way through the sender.
type work struct {
	part   *partition
	offset int64
	d      records.Delivery
	head   envelopeHead
	size   int64 // bytes of the record value, against Config.MaxBufferedBytes
}

// lane is one endpoint's share of the sender (R21): a bounded FIFO queue, at most max_in_flight
// workers (one for an ordered endpoint), an optional rate limit and a circuit breaker. Workers
// start when work arrives and exit when the queue is empty, so an idle endpoint costs no
// goroutine. Lanes are created and removed only by the poll loop, so an endpoint never has two.
type lane struct {
	id string

	mu          sync.Mutex
	queue       []*work
	running     int // workers
	busy        int // workers holding an item
	maxInFlight int
	ordered     bool
	limiter     *rate.Limiter // nil: no rate limit
	ratePerSec  float64
	configured  *records.Endpoint // the view's value the settings were taken from
	breaker     breaker
	signerKey   string
	signer      *webhook.Signer
	lastUsed    time.Time
}

// configure takes the endpoint's limits from its current record; nil (not in the view) keeps
// the previous settings, or the defaults for a new lane.
func (l *lane) configure(ep *records.Endpoint, defaultMaxInFlight int) {
	if ep == nil {
		if l.maxInFlight == 0 {
			l.maxInFlight = defaultMaxInFlight
		}
		return
	}
	if ep == l.configured {
		return
	}
	l.configured = ep
	l.maxInFlight = ep.MaxInFlight
	if l.maxInFlight <= 0 {
		l.maxInFlight = defaultMaxInFlight
	}
	l.ordered = ep.Ordered
	switch r := ep.RateLimitPerSec; {
	case r == nil || *r <= 0:
		l.limiter, l.ratePerSec = nil, 0
	case l.limiter == nil:
		// A burst of one: never more than one request ahead of the rate.
		l.limiter, l.ratePerSec = rate.NewLimiter(rate.Limit(*r), 1), *r
	case *r != l.ratePerSec:
		l.limiter.SetLimit(rate.Limit(*r))
		l.ratePerSec = *r
	}
}

// limit is the number of workers the lane may run.
func (l *lane) limit() int {
	if l.ordered {
		return 1
	}
	return l.maxInFlight
}

// signerFor returns a signer for the endpoint's active secrets (expires_at unset or in the
// future), newest first, opened with the processes' key. It is rebuilt only when the set of
// active secrets or the endpoint record changes.
func (l *lane) signerFor(ep *records.Endpoint, key secretbox.Key, now time.Time) (*webhook.Signer, error) {
	active := make([]records.Secret, 0, len(ep.Secrets))
	for _, s := range ep.Secrets {
		if s.ExpiresAt == nil || s.ExpiresAt.After(now) {
			active = append(active, s)
		}
	}
	if len(active) == 0 {
		return nil, fmt.Errorf("endpoint has no active signing secret")
	}
	slices.SortStableFunc(active, func(a, b records.Secret) int { return b.CreatedAt.Compare(a.CreatedAt) })
	ids := make([]string, len(active))
	for i, s := range active {
		ids[i] = s.ID
	}
	cacheKey := strconv.FormatUint(uint64(ep.LSN), 10) + "/" + strings.Join(ids, ",")

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.signer != nil && l.signerKey == cacheKey {
		return l.signer, nil
	}
	plain := make([]string, len(active))
	for i, s := range active {
		p, err := secretbox.Open(key, s.Ciphertext, secretbox.AAD(ep.ID, s.ID))
		if err != nil {
			// Never sign with a subset: receivers mid-rotation might hold only the other one.
			return nil, fmt.Errorf("secret %s cannot be opened (check HOOKSTREAM_SECRET_KEY): %w", s.ID, err)
		}
		plain[i] = string(p)
	}
	signer, err := webhook.NewSigner(plain...)
	if err != nil {
		return nil, fmt.Errorf("endpoint secrets: %w", err)
	}
	l.signer, l.signerKey = signer, cacheKey
	return signer, nil
}
