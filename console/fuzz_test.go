package console

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The console's own parsing of what a browser sends (the deliveries filter, the endpoint form):
// any input is either taken or refused with a message for people, never a panic.
func FuzzFilterAndEndpointForm(f *testing.F) {
	f.Add("failed", "timeout", "5xx", "customer.*", "2026-01-02T15:04", "", "https://example.com/h", "*", "8", "1.5", "on")
	f.Add("", "", "503", "", "2026-01-02T15:04:05Z", "yesterday", "", " , ", "x", "-1", "")
	f.Add("nope", "dns", "99", "a,b", "2026-13-40T99:99", "2026-01-02T15:04:05+02:00", "ftp://x", "\x00", "1e9", "NaN", "off")
	f.Fuzz(func(t *testing.T, state, category, status, typ, since, until, u, types, inFlight, rate, ordered string) {
		q := url.Values{"state": {state}, "category": {category}, "status": {status}, "type": {typ}, "since": {since}, "until": {until}}
		r := httptest.NewRequest(http.MethodGet, "/console/x?"+q.Encode(), nil)
		if f, err := readFilter(r); err != nil {
			if pe, ok := err.(*pageError); !ok || pe.status != http.StatusBadRequest || pe.msg == "" {
				t.Fatalf("filter refused without a clear 400: %v", err)
			}
		} else {
			for _, s := range []string{f.Since, f.Until} {
				if _, err := parseTime(s); err != nil && !strings.Contains(err.Error(), "not a time") {
					t.Fatalf("time %q: %v", s, err)
				}
			}
		}
		form := url.Values{"url": {u}, "event_types": {types}, "max_in_flight": {inFlight}, "rate_limit_per_sec": {rate},
			"ordering": {ordered}, "retry_delays": {inFlight + "," + rate}, "retry_attempts": {inFlight},
			"retry_event_types": {typ}, "headers": {types}, "auth_type": {ordered}, "auth_scopes": {types}}
		pr := httptest.NewRequest(http.MethodPost, "/console/x", strings.NewReader(form.Encode()))
		pr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if err := pr.ParseForm(); err != nil {
			return
		}
		for _, edit := range []bool{false, true} {
			ef := readEndpointForm(pr.PostForm)
			ef.Edit = edit
			b := ef.body()
			for field, msgs := range ef.Errors {
				if formField(field) != field && !strings.HasPrefix(field, "retry_") {
					t.Fatalf("a refusal of %q, which is no field of the form", field)
				}
				for _, m := range msgs {
					if m == "" {
						t.Fatal("a refused field without a message")
					}
				}
			}
			if _, err := json.Marshal(b); err != nil {
				t.Fatalf("a form makes no JSON: %v", err)
			}
			if _, ok := b["event_types"].([]string); !ok {
				t.Fatalf("event_types %T", b["event_types"])
			}
		}
	})
}
