package admin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hookstream/hookstream/outbox"
)

// fuzzBodies are request bodies worth trying on every write route: malformed, mistyped,
// hostile and oversized JSON, and values PostgreSQL cannot store.
var fuzzBodies = []string{
	``, ` `, `{}`, `null`, `[]`, `"x"`, `1`, `{`, `}`, `{}{}`, `{} x`, `{"a":1}`, `{"":""}`,
	`{"url":null}`, `{"url":1}`, `{"url":"\u0000"}`, `{"url":"https://hooks.example.com/\u0000"}`,
	`{"event_types":"*"}`, `{"event_types":[1]}`, `{"event_types":["\u0000"]}`, `{"event_types":[null]}`,
	`{"max_in_flight":1e400}`, `{"max_in_flight":-1}`, `{"max_in_flight":1.5}`, `{"max_in_flight":99999999999999999999}`,
	`{"rate_limit_per_sec":-0}`, `{"rate_limit_per_sec":1e308}`, `{"schema_version":0}`, `{"ordered":"yes"}`,
	`{"reason":""}`, `{"reason":"\u0000"}`, `{"reason":"` + strings.Repeat("r", 600) + `"}`,
	`{"id":"a b"}`, `{"id":"` + strings.Repeat("p", 65) + `"}`, `{"id":"ok","name":"\u0000"}`, `{"id":"x","id":"y"}`,
	`{"since":"yesterday"}`, `{"since":"1969-12-31T23:59:59Z"}`, `{"since":"9999-12-31T23:59:59Z"}`, `{"source":"tape"}`,
	`{"state":"burning","since":"2020-01-01T00:00:00Z"}`, `{"overlap_seconds":-5}`, `{"overlap_seconds":1e30}`,
	"{\"description\":\"\xff\xfe\"}", `{"a":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`,
	`{"description":"` + strings.Repeat("d", 2<<20) + `"}`,
	`{"headers":null}`, `{"headers":[]}`, `{"headers":{"X-A":"\r\nX-B: 1"}}`, `{"headers":{"":"x"}}`, `{"headers":{"X-A":null}}`,
	`{"auth":"basic"}`, `{"auth":{}}`, `{"auth":{"type":"basic","username":"\u0000","password":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}}`,
	`{"auth":{"type":"oauth2","token_url":"http://169.254.169.254/","client_id":"c","client_secret":"12345678"}}`,
	`{"auth":{"type":"oauth2","token_url":"%zz","client_id":"c","client_secret":"12345678","scopes":[null]}}`,
	`{"client_certificate":{"certificate_pem":"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n","private_key_pem":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}}`,
	`{"client_certificate":null}`, `{"egress_proxy":1}`, `{"egress_proxy":"../x"}`,
}

// FuzzWriteRoutes posts random and mutated JSON to every write route as the operator: no answer
// is a 5xx, every answer is JSON, and a refused request writes nothing to PostgreSQL or Kafka.
func FuzzWriteRoutes(f *testing.F) {
	e := newEnv(f)
	e.partner("acme")
	ep := e.endpoint("acme", "customer.*")
	evID := e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1"}`)
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 10, []string{evID}, []time.Time{time.Now()})[0]
	epPath := "/v1/partners/acme/endpoints/" + ep.ID
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	jid := newID(replayJobPrefix)
	if _, err := e.DB.Pool.Exec(context.Background(), `INSERT INTO replay_job (id, partner_id, endpoint_id, source) VALUES ($1, 'acme', $2, 'history')`, jid, ep.ID); err != nil {
		f.Fatal(err)
	}
	var opEP createdEndpoint
	e.must(201, operatorToken, "POST", "/v1/operator/endpoints", map[string]any{
		"url": "https://hooks.example.com/ops", "event_types": []string{"operator.*"}}).json(f, &opEP)
	opPath := "/v1/operator/endpoints/" + opEP.ID
	opEvent := e.appendEvent(outbox.OperatorPartnerID, "operator.quota.refused", `{"partner_id":"acme","quota":"endpoints","limit":1,"usage":1}`)
	opDid := e.seedDeliveries(outbox.OperatorPartnerID, opEP.ID, "operator.quota.refused", "failed", 10, []string{opEvent}, []time.Time{time.Now()})[0]
	targets := []struct {
		method, path string
		valid        []string
	}{
		{"POST", "/v1/partners", []string{`{"id":"fuzz-1","name":"Fuzz"}`}},
		{"POST", "/v1/partners/acme/api-keys", []string{`{}`}},
		{"POST", "/v1/partners/acme/endpoints", []string{`{"url":"https://hooks.example.com/a","event_types":["customer.*"],"description":"d","schema_version":1,"max_in_flight":4,"rate_limit_per_sec":2.5,"ordered":true}`}},
		{"PATCH", epPath, []string{`{"description":"x","rate_limit_per_sec":null,"event_types":["*"]}`}},
		{"POST", epPath + "/disable", []string{`{"reason":"maintenance"}`}},
		{"POST", epPath + "/enable", []string{`{}`}},
		{"POST", epPath + "/secret/rotate", []string{`{"overlap_seconds":60}`}},
		{"POST", epPath + "/secret/end-rotation", []string{`{}`}},
		{"POST", epPath + "/test", []string{`{}`}},
		{"POST", epPath + "/replay", []string{`{"since":"` + since + `","source":"log","state":"missing"}`}},
		{"POST", "/v1/partners/acme/deliveries/" + did + "/replay", []string{`{}`}},
		{"POST", "/v1/partners/acme/replay-jobs/" + jid + "/cancel", []string{`{}`}},
		{"POST", "/v1/operator/endpoints", []string{`{"url":"https://hooks.example.com/o","event_types":["operator.*"]}`}},
		{"PATCH", opPath, []string{`{"description":"x","event_types":["operator.*"]}`}},
		{"POST", opPath + "/disable", []string{`{"reason":"maintenance"}`}},
		{"POST", opPath + "/enable", []string{`{}`}},
		{"POST", opPath + "/secret/rotate", []string{`{"overlap_seconds":60}`}},
		{"POST", opPath + "/secret/end-rotation", []string{`{}`}},
		{"POST", opPath + "/test", []string{`{}`}},
		{"POST", "/v1/operator/deliveries/" + opDid + "/replay", []string{`{}`}},
	}
	writes := 0
	for _, rt := range e.api.routes {
		if rt.method == "POST" || rt.method == "PATCH" {
			writes++
			found := false
			for _, tg := range targets {
				if tg.method == rt.method && pathMatches(rt.path, tg.path) {
					found = true
				}
			}
			if !found {
				f.Errorf("write route %s is not fuzzed", rt.pattern())
			}
		}
	}
	if writes != len(targets) {
		f.Errorf("%d write routes, %d fuzz targets", writes, len(targets))
	}
	for i, tg := range targets {
		for _, b := range tg.valid {
			f.Add(uint8(i), []byte(b))
		}
		for _, b := range fuzzBodies {
			f.Add(uint8(i), []byte(b))
		}
	}
	adm := kadm.NewClient(e.Kafka.Client(f))
	produced := func(t *testing.T) int64 {
		ends, err := adm.ListEndOffsets(context.Background(), e.Names.Deliveries)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		return sum
	}

	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		tg := targets[int(which)%len(targets)]
		before, records := e.digest(t), produced(t)
		r := e.do(operatorToken, tg.method, tg.path, body)
		if r.Status >= 500 {
			t.Fatalf("%s %s with %q: %s", tg.method, tg.path, truncate(body), r)
		}
		if r.Status != 204 && !json.Valid(r.Body) {
			t.Fatalf("%s %s: answer is not JSON: %s", tg.method, tg.path, r)
		}
		if r.Status < 400 {
			return
		}
		var eb errorBody
		if json.Unmarshal(r.Body, &eb) != nil || eb.Code == "" || eb.Detail == "" {
			t.Fatalf("%s %s: refusal without the error shape: %s", tg.method, tg.path, r)
		}
		if after := e.digest(t); after != before {
			t.Fatalf("%s %s with %q was refused (%s) but changed PostgreSQL", tg.method, tg.path, truncate(body), r)
		}
		if n := produced(t); n != records {
			t.Fatalf("%s %s with %q was refused (%s) but produced %d records", tg.method, tg.path, truncate(body), r, n-records)
		}
	})
}

// pathMatches reports whether a concrete path fits a route pattern's path.
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if !strings.HasPrefix(ps[i], "{") && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// digest summarises every table the API writes (API keys without last_used_at, which
// authentication touches).
func (e *env) digest(t testing.TB) string {
	t.Helper()
	var d string
	err := e.DB.Pool.QueryRow(context.Background(), `SELECT md5(coalesce(string_agg(x, '|' ORDER BY x), '')) FROM (
		SELECT 'p' || row(p.*)::text AS x FROM partner p
		UNION ALL SELECT 'k' || row(k.id, k.partner_id, k.key_hash, k.revoked_at)::text FROM partner_api_key k
		UNION ALL SELECT 'e' || row(e.*)::text FROM endpoint e
		UNION ALL SELECT 's' || row(s.*)::text FROM endpoint_secret s
		UNION ALL SELECT 'j' || row(j.*)::text FROM replay_job j
		UNION ALL SELECT 'o' || row(o.*)::text FROM outbox_event o
		UNION ALL SELECT 'r' || row(r.*)::text FROM replay_reservation r
		UNION ALL SELECT 'd' || row(d.*)::text FROM delivery d) AS all_rows`).Scan(&d)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
