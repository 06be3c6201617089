package admin

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// timestampPattern is TimestampLayout as a pattern: what every time of a response matches.
var timestampPattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$`)

// looksLikeTime is any RFC 3339 time, whatever its precision.
var looksLikeTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}`)

func TestTimestampFormat(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), "2026-01-02T15:04:05.000000Z"},
		{time.Date(2026, 1, 2, 15, 4, 5, 286810000, time.UTC), "2026-01-02T15:04:05.286810Z"},
		{time.Date(2026, 1, 2, 16, 4, 5, 123456789, paris), "2026-01-02T15:04:05.123456Z"},
	} {
		b, err := json.Marshal(struct {
			T timestamp  `json:"t"`
			P *timestamp `json:"p"`
		}{T: stamp(c.in), P: stampPtr(&c.in)})
		if want := `{"t":"` + c.want + `","p":"` + c.want + `"}`; err != nil || string(b) != want {
			t.Errorf("%v: %s (%v), want %s", c.in, b, err, want)
		}
	}
	if b, _ := json.Marshal(struct {
		P *timestamp `json:"p"`
	}{}); string(b) != `{"p":null}` {
		t.Errorf("a null time: %s", b)
	}
}

// TestOpenAPITimestamps: every time a response of the document holds is declared with the one
// pattern, and every example time matches it. The envelopes (the events as published) and
// the request bodies and parameters (which take any RFC 3339 time) are not the API's writing.
func TestOpenAPITimestamps(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	declared := 0
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["format"] == "date-time" {
				declared++
				if v["pattern"] != timestampPattern.String() {
					t.Errorf("%s: date-time without the pattern %s", at, timestampPattern)
				}
			}
			for k, x := range v {
				walk(at+"/"+k, x)
			}
		case []any:
			for _, x := range v {
				walk(at+"[]", x)
			}
		case string:
			if looksLikeTime.MatchString(v) && !timestampPattern.MatchString(v) && strings.Contains(at, "example") {
				t.Errorf("%s: example time %q does not match %s", at, v, timestampPattern)
			}
		}
	}
	for name, s := range schemas {
		switch name {
		case "Envelope", "ReplayJobRequest", "EventType", "EventTypeList":
			continue
		}
		walk("components/schemas/"+name, s)
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if op, ok := op.(map[string]any); ok {
				walk(path+" "+method+"/responses", op["responses"])
			}
		}
	}
	if declared < 30 {
		t.Errorf("%d response times declared; the walk missed the schemas", declared)
	}
}

// TestTimestampsInResponses reads the main routes' answers: every time in them has the one
// format, whatever the time's own precision (PostgreSQL's microseconds, Go's nanoseconds, a
// request's whole seconds).
func TestTimestampsInResponses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme")
	v1a := map[string]any{"url": "https://hooks.example.com/ed", "event_types": []string{"*"}, "signature_scheme": "v1a"}
	ev := e.appendEvent("acme", "customer.created", `{"customer_id":"cus_1"}`)
	did := e.seedDeliveries("acme", ep.ID, "customer.created", "failed", 2, []string{ev}, []time.Time{time.Now()})[0]
	since := time.Now().Add(-time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	var job jobAccepted
	e.must(202, operatorToken, "POST", "/v1/partners/acme/endpoints/"+ep.ID+"/replay", map[string]string{"since": since}).json(t, &job)
	base, epPath := "/v1/partners/acme", "/v1/partners/acme/endpoints/"+ep.ID
	seen := 0
	for _, c := range []struct {
		want         int
		method, path string
		body         any
	}{
		{201, "POST", "/v1/partners", map[string]string{"id": "globex"}},
		{200, "GET", base, nil},
		{201, "POST", base + "/api-keys", nil},
		{200, "GET", base + "/api-keys", nil},
		{201, "POST", base + "/endpoints", v1a},
		{200, "POST", epPath + "/secret/rotate", nil},
		{200, "GET", epPath, nil},
		{200, "GET", base + "/endpoints", nil},
		{200, "GET", epPath + "/secret/keys", nil},
		{200, "GET", base + "/public-keys", nil},
		{200, "GET", epPath + "/deliveries", nil},
		{200, "GET", base + "/deliveries/" + did, nil},
		{200, "GET", base + "/deliveries?event_id=" + ev, nil},
		{200, "GET", base + "/replay-jobs/" + job.JobID, nil},
		{200, "GET", base + "/replay-jobs", nil},
		{200, "POST", epPath + "/disable", map[string]string{"reason": "maintenance"}},
	} {
		r := e.must(c.want, operatorToken, c.method, c.path, c.body)
		var v any
		r.json(t, &v)
		var walk func(at string, v any)
		walk = func(at string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					walk(at+"."+k, x)
				}
			case []any:
				for _, x := range v {
					walk(at+"[]", x)
				}
			case string:
				if looksLikeTime.MatchString(v) {
					seen++
					if !timestampPattern.MatchString(v) {
						t.Errorf("%s %s: %s = %q, want %s", c.method, c.path, at, v, TimestampLayout)
					}
				}
			}
		}
		walk("", v)
	}
	if seen < 40 {
		t.Errorf("%d times in the answers; the walk missed them", seen)
	}
}
