package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/outbox"
)

// The pages show an attempt's latency from the API's microseconds, in the unit that fits; an
// attempt recorded with milliseconds only shows what the history has.
func TestPagesShowLatencyInTheUnitThatFits(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b, eid := s.signedIn(t, "acme")
	ev := outbox.NewEventID()
	did := records.DeliveryID(ev, eid)
	ctx := context.Background()
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO delivery (delivery_id, event_id, endpoint_id, partner_id, event_type, state,
			attempt_count, last_status, last_latency_ms, last_latency_us, created_at, updated_at)
		VALUES ($1, $2, $3, 'acme', 'customer.created', 'succeeded', 3, 204, 0, 850, now(), now())`, did, ev, eid); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO delivery_attempt (delivery_id, attempt_no, trigger, started_at, status,
			latency_ms, latency_us, error_category)
		VALUES ($1, 1, 'initial', now() - interval '2 minutes', 503, 1250, 1250000, 'http_status'),
		       ($1, 2, 'retry', now() - interval '1 minute', 503, 0, NULL, 'http_status'),
		       ($1, 3, 'retry', now(), 204, 0, 850, NULL)`, did); err != nil {
		t.Fatal(err)
	}

	for path, want := range map[string][]string{
		"/console/partners/acme/deliveries/" + did:                 {"<td>1.25 s</td>", "<td>under 1 ms</td>", "<td>850 µs</td>"},
		"/console/partners/acme/deliveries/" + did + "/attempts/3": {"<dd>850 µs</dd>"},
		"/console/partners/acme/deliveries/" + did + "/attempts/2": {"<dd>under 1 ms</dd>"},
		"/console/partners/acme/endpoints/" + eid:                  {"<td>850 µs</td>", "median 850 µs"},
		"/console/partners/acme/endpoints":                         {"median 850 µs"},
	} {
		page := b.do("GET", path, nil)
		if page.status != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, page.status, page.body)
		}
		for _, w := range want {
			if !strings.Contains(page.body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
}
