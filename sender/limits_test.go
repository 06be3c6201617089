package sender_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// R28, R37: a receiver whose address accepts no TCP handshake costs an attempt its connect
// timeout, not its request timeout: the attempt is recorded as a timeout and handed to the
// retrier, the lane frees for the endpoint's next record, and other endpoints are not slowed
// meanwhile.
func TestConnectThatHangsGivesUpAtTheConnectTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hangAddr := testenv.UnansweredAddr(t)
	_, hangPort, _ := net.SplitHostPort(hangAddr)
	e.endpoint("ep_hang", "p_a", func(ep *records.Endpoint) {
		ep.URL, ep.MaxInFlight = "http://"+hangAddr+"/hook", 1
	})
	e.endpoint("ep_ok", "p_a")
	cfg := e.config()
	p, _ := strconv.Atoi(hangPort)
	cfg.Egress.AllowedPorts = append(cfg.Egress.AllowedPorts, p)
	cfg.Egress.ConnectTimeout = 2 * time.Second
	cfg.Egress.RequestTimeout = 10 * time.Second
	cfg.ShutdownGrace = 11 * time.Second
	e.start(cfg)

	// The hanging endpoint's records come first on the partition, one request at a time.
	hanging := deliveries(3, "p_a", "ep_hang", "customer.created")
	healthy := deliveries(20, "p_a", "ep_ok", "customer.created")
	e.deliver(0, append(hanging, healthy...)...)

	e.waitDelivered(healthy...)
	if n := e.attempts.count(func(a records.Attempt) bool { return a.EndpointID == "ep_hang" }); n != 0 {
		t.Fatalf("%d attempts of the hanging endpoint finished before the healthy endpoint's 20 were delivered; want none (its first connect is still waiting)", n)
	}

	// Each connect gives up after the connect timeout, one after the other: the lane frees.
	for _, d := range hanging {
		a := e.waitAttempt(d)
		latency := time.Duration(a.LatencyMS) * time.Millisecond
		if a.Outcome != records.OutcomeRetrying || a.ErrorCategory != records.CategoryTimeout || a.Status != 0 {
			t.Fatalf("attempt of the hanging endpoint: outcome %s, category %s, status %d; want retrying, timeout, no status",
				a.Outcome, a.ErrorCategory, a.Status)
		}
		if latency < cfg.Egress.ConnectTimeout-100*time.Millisecond || latency >= cfg.Egress.RequestTimeout {
			t.Fatalf("attempt took %s; want the connect timeout %s, not the request timeout %s", latency, cfg.Egress.ConnectTimeout, cfg.Egress.RequestTimeout)
		}
		if !strings.Contains(a.ResponseExcerpt, hangAddr) {
			t.Errorf("evidence %q does not name the address %s", a.ResponseExcerpt, hangAddr)
		}
	}
	if n := len(e.retrier.scheduled("ep_hang")); n != 3 {
		t.Fatalf("%d retries scheduled for the hanging endpoint, want 3", n)
	}
}

// R28: the sender sends a body of up to MaxBodyBytes (1 MiB by default) and refuses a larger
// one with its reason in a dead letter, without a request.
func TestRequestBodyLimitIsExact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.endpoint("ep_a", "p_a")
	cfg := e.config()
	if cfg.MaxBodyBytes != 1<<20 {
		t.Fatalf("default MaxBodyBytes = %d, want 1 MiB", cfg.MaxBodyBytes)
	}
	e.start(cfg)

	at := sizedDelivery(t, "ep_a", cfg.MaxBodyBytes)
	over := sizedDelivery(t, "ep_a", cfg.MaxBodyBytes+1)
	// A delivery record with a 1 MiB body is above the client's default batch size: write it
	// compressed, as one of a larger batch.
	big := e.kafka.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(4<<20), kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	for _, d := range []records.Delivery{over, at} {
		r := &kgo.Record{Topic: e.names.Deliveries, Key: []byte(d.EndpointID), Value: d.AppendJSON(nil)}
		if err := big.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	e.waitDelivered(at)
	got := e.rcv.got("ep_a")
	if len(got) != 1 || len(got[0].body) != cfg.MaxBodyBytes || got[0].header.Get("webhook-id") != at.EventID {
		t.Fatalf("the receiver got %d requests; want one, of the %d-byte body", len(got), cfg.MaxBodyBytes)
	}
	letters := readDeadLetters(t, e, 1)
	want := fmt.Sprintf("body of %d bytes exceeds the %d-byte request limit", cfg.MaxBodyBytes+1, cfg.MaxBodyBytes)
	if dl := letters[0]; dl.Source != "sender" || dl.EventID != over.EventID || !strings.Contains(dl.Reason, want) {
		t.Fatalf("dead letter %s/%s %q; want the sender's, of %s, saying %q", dl.Source, dl.EventID, dl.Reason, over.EventID, want)
	}
	if n := len(e.attempts.of(over.DeliveryID)); n != 0 {
		t.Fatalf("the oversized delivery has %d attempts", n)
	}
}

// sizedDelivery is a delivery to endpointID whose body, a valid envelope, is exactly size bytes.
func sizedDelivery(t *testing.T, endpointID string, size int) records.Delivery {
	t.Helper()
	d := delivery("p_a", endpointID, "customer.created")
	id := d.EventID
	head := fmt.Sprintf(`{"event_id":"%s","type":"customer.created","partner_id":"p_a","schema_version":1,"data":{"pad":"`, id)
	tail := `"}}`
	if size < len(head)+len(tail) {
		t.Fatalf("size %d below the envelope's %d", size, len(head)+len(tail))
	}
	d.Body = []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
	return d
}
