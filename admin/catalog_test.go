package admin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/outbox"
)

// TestCatalog checks each event type: a well-formed type, an example that satisfies its schema,
// and no field that could carry a secret or raw content (R4, R6, R7).
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	forbidden := regexp.MustCompile(`(?i)(secret|password|^token$|_token$|credential|prompt|completion|^api_key$|^key$|evidence)`)
	for _, et := range catalog {
		if !outbox.ValidType(et.Type) || seen[et.Type] {
			t.Errorf("type %q is malformed or repeated", et.Type)
		}
		seen[et.Type] = true
		var s, ex map[string]any
		if err := json.Unmarshal(et.Schema, &s); err != nil {
			t.Fatalf("%s: schema: %v", et.Type, err)
		}
		if err := json.Unmarshal(et.Example, &ex); err != nil {
			t.Fatalf("%s: example: %v", et.Type, err)
		}
		if err := validate(s, ex, "data"); err != nil {
			t.Errorf("%s: the example does not satisfy the schema: %v", et.Type, err)
		}
		walkProperties(s, func(name string, prop map[string]any) {
			if forbidden.MatchString(name) {
				t.Errorf("%s: property %q may carry secret or raw content (R6)", et.Type, name)
			}
			if prop["type"] == "number" {
				t.Errorf("%s: property %q is a float; money is a decimal string (R7)", et.Type, name)
			}
		})
	}
	for _, want := range []string{"customer.created", "api_key.created", "balance.credited", "budget.threshold_crossed",
		"usage.finalized", "endpoint.failing", "endpoint.disabled", "webhook.test"} {
		if !seen[want] {
			t.Errorf("catalog lacks %s", want)
		}
	}
	// A mismatching example is caught: the validator is not a no-op.
	var s map[string]any
	_ = json.Unmarshal(catalog[0].Schema, &s)
	if validate(s, map[string]any{"customer_id": 5}, "data") == nil {
		t.Error("validator accepted a wrong example")
	}
}

func walkProperties(s map[string]any, fn func(string, map[string]any)) {
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		fn(name, pm)
		walkProperties(pm, fn)
	}
}

// validate checks v against the JSON Schema keywords the catalog uses.
func validate(s map[string]any, v any, at string) error {
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object", at)
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := m[r.(string)]; !ok {
				return fmt.Errorf("%s: %s is required", at, r)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, val := range m {
			ps, ok := props[k].(map[string]any)
			if !ok {
				continue // open to additional properties (R31)
			}
			if err := validate(ps, val, at+"."+k); err != nil {
				return err
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array", at)
		}
		items, _ := s["items"].(map[string]any)
		for i, x := range a {
			if err := validate(items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string", at)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", at, str, p)
		}
	case "integer":
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return fmt.Errorf("%s: want an integer", at)
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
		}
	}
	return nil
}

func TestEventTypesAndLimitsRoutes(t *testing.T) {
	a := unitAPI(t)
	r := call(a, operatorToken, "GET", "/v1/event-types", nil)
	var page catalogPage
	if err := json.Unmarshal(r.Body, &page); err != nil || r.Status != 200 || len(page.Data) != len(catalog) || len(page.Envelope) == 0 {
		t.Fatalf("event types: %d %v", r.Status, err)
	}
	r = call(a, operatorToken, "GET", "/v1/limits", nil)
	var l limitsView
	if err := json.Unmarshal(r.Body, &l); err != nil || l.FeedRetentionSeconds != 30*86400 || l.ReplayWindowSeconds == 0 ||
		l.HistoryRetentionSeconds == 0 || l.OutboxRetentionSeconds != 7*86400 || !strings.Contains(string(r.Body), "notes") {
		t.Fatalf("limits: %s", r.Body)
	}
}
