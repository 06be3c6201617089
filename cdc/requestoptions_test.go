package cdc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
)

// TestEndpointRequestOptionsArePublished: request_options reaches the endpoint record as it is
// stored; an update of another column keeps it even when it is large enough to be TOASTed (the
// WAL then carries it as unchanged, not as a value); replacing and clearing it is published.
func TestEndpointRequestOptionsArePublished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	startStreaming(t, e, e.config(t))
	ctx := context.Background()
	// A certificate chain of random-looking text does not compress: the value is stored out of
	// line, as a real chain is.
	var chain strings.Builder
	for i := range 300 {
		chain.WriteString(records.DeliveryID("evt_"+strings.Repeat("x", i), "ep"))
	}
	big := records.RequestOptions{
		Headers:           map[string]string{"X-Tenant": "acme"},
		Auth:              &records.Auth{Type: records.AuthBasic, Username: "hooks", SecretCiphertext: []byte{1, 2, 3}},
		ClientCertificate: &records.ClientCertificate{CertificatePEM: chain.String(), KeyCiphertext: []byte{4, 5, 6}},
		EgressProxy:       "eu",
	}
	e.DB.Exec(t, `INSERT INTO partner (id, name) VALUES ('p1', 'Partner One') ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`)
	e.DB.Exec(t, `INSERT INTO endpoint (id, partner_id, url, event_types, request_options) VALUES ('ep_1', 'p1', 'https://example.com/hook', '{*}', $1)`, big)
	var toast string
	if err := e.DB.Pool.QueryRow(ctx, `SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'endpoint'::regclass`).Scan(&toast); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := e.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM `+toast).Scan(&chunks); err != nil {
		t.Fatal(err)
	}
	if chunks == 0 {
		t.Fatal("request_options is not stored out of line, so the unchanged-TOAST case is not tested")
	}
	e.DB.Exec(t, `UPDATE endpoint SET description = 'changed', version = version + 1 WHERE id = 'ep_1'`)
	e.DB.Exec(t, `UPDATE endpoint SET request_options = $1, version = version + 1 WHERE id = 'ep_1'`,
		records.RequestOptions{Headers: map[string]string{"X-Other": "1"}})
	e.DB.Exec(t, `UPDATE endpoint SET request_options = '{}', version = version + 1 WHERE id = 'ep_1'`)

	got := consume(t, e, e.Names.Endpoints, 4, 30*time.Second)
	vals := make([]records.Endpoint, len(got.records))
	for i, r := range got.records {
		if err := json.Unmarshal(r.Value, &vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	same := func(a, b records.RequestOptions) bool {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return string(ja) == string(jb)
	}
	if !same(vals[0].RequestOptions, big) {
		t.Fatalf("created: options %+v", vals[0].RequestOptions)
	}
	if vals[1].Description != "changed" || !same(vals[1].RequestOptions, big) {
		t.Fatalf("after another column changed (the value unchanged in the WAL): options %+v", vals[1].RequestOptions)
	}
	if o := vals[2].RequestOptions; len(o.Headers) != 1 || o.Headers["X-Other"] != "1" || o.Auth != nil || o.ClientCertificate != nil || o.EgressProxy != "" {
		t.Fatalf("replaced: options %+v (a replacement must not merge with the old value)", o)
	}
	if o := vals[3].RequestOptions; !same(o, records.RequestOptions{}) {
		t.Fatalf("cleared: options %+v", o)
	}
}
