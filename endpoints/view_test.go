package endpoints_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// A record of the endpoints topic the view cannot read leaves a live endpoint as it was, so its
// next events are still delivered; the record is counted. A later good record still applies.
func TestEndpointViewKeepsLastGoodState(t *testing.T) {
	kafka := testenv.NewKafka(t)
	names := kafka.CreateTopics(t)
	reg := prometheus.NewRegistry()
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: kafka.Brokers, Topic: names.Endpoints,
		Logger: slog.New(slog.DiscardHandler), Registerer: reg, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, "endpoint view", view.Run)
	cl := kafka.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	put := func(key string, value []byte) {
		t.Helper()
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: names.Endpoints, Key: []byte(key), Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := view.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
	}
	endpoint := func(status string, version int64) []byte {
		b, err := json.Marshal(records.Endpoint{V: records.EndpointVersion, ID: "ep_live", PartnerID: "p1", URL: "https://x.example",
			Status: status, EventTypes: []string{"customer.*"}, SchemaVersion: 1, Version: version, CreatedLSN: 1, LSN: records.LSN(version),
			Secrets: []records.Secret{{ID: "sec_1", Ciphertext: []byte("sealed")}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	live := func(wantStatus string, wantVersion int64) {
		t.Helper()
		ep, ok := view.Get("ep_live")
		if !ok || ep.Status != wantStatus || ep.Version != wantVersion || len(ep.Secrets) != 1 {
			t.Fatalf("ep_live in the view: %v %+v; want %s at version %d with its secret", ok, ep, wantStatus, wantVersion)
		}
		if got := view.ForPartner("p1"); len(got) != 1 || got[0].ID != "ep_live" {
			t.Fatalf("p1's endpoints: %v", got)
		}
		if !endpoints.Receives(ep, "p1", "customer.created") && wantStatus == "active" {
			t.Fatal("the live endpoint no longer receives its events")
		}
	}

	put("ep_live", endpoint("active", 1))
	live("active", 1)
	garbage := [][]byte{
		[]byte(`{"v":1,"id":"ep_live","partner_id":`),
		[]byte("\x00\xff not json"),
		{},
		[]byte(`{"v":2,"id":"ep_live","partner_id":"p1","status":"active"}`),
		[]byte(`{"v":1,"id":"ep_other","partner_id":"p1","status":"active"}`),
		[]byte(`{"v":1,"id":"ep_live","partner_id":"p1","status":"active","secrets":"whsec_not_sealed"}`),
		[]byte(`{"v":1,"id":"ep_live","status":"active"}`),
	}
	for _, g := range garbage {
		put("ep_live", g)
	}
	live("active", 1)
	if n := testenv.Counter(t, reg, "hookstream_endpoint_view_bad_records_total"); n != float64(len(garbage)) {
		t.Fatalf("bad records counted %v, want %d", n, len(garbage))
	}
	if view.Len() != 1 {
		t.Fatalf("%d endpoints in the view, want 1", view.Len())
	}

	put("ep_live", endpoint("disabled", 2))
	live("disabled", 2)
	put("ep_live", nil)
	if _, ok := view.Get("ep_live"); ok || view.Len() != 0 {
		t.Fatal("a tombstone did not delete the endpoint")
	}
}
