package eventcatalog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

// R6: a field the catalog forbids is refused anywhere in data, declared by the schema or not,
// nested in objects and arrays; the allowed names pass only with their harmless shape.
func TestForbiddenFieldsAnywhereInData(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	et, _ := eventcatalog.Lookup("usage.finalized")
	base := strings.TrimSuffix(string(et.Example), "}")
	cases := []struct {
		extra string
		field string // "" when accepted
	}{
		{``, ""},
		{`,"api_key":"rsk_live_abc"`, "data/api_key"},
		{`,"meta":{"providerSecret":"x"}`, "data/meta/providerSecret"},
		{`,"calls":[{"model":"m"},{"prompt_text":"hello"}]`, "data/calls/1/prompt_text"},
		{`,"Authorization":"Bearer x"`, "data/Authorization"},
		{`,"debug":{"session-cookie":"x"}`, "data/debug/session-cookie"},
		{`,"keys":{"api_key_id":"sk_live_123"}`, "data/keys/api_key_id"},
		{`,"related":{"api_key_id":"key_9"}`, ""},
		{`,"monkey":"no word key in it","content_type":"text/plain","turnkey":1`, ""},
	}
	for _, tc := range cases {
		data := []byte(base + tc.extra + "}")
		err := c.CheckEvent(eventOf(et, data))
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.extra, err)
			}
			continue
		}
		var verr *outbox.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, outbox.ErrInvalidData) || verr.Field != tc.field || !forbiddenReason(verr.Reason) {
			t.Errorf("%s: got %v, want a refusal of %s (R6)", tc.extra, err, tc.field)
		}
	}
}

// forbiddenReason reports whether reason is one of the catalog's refusals of a forbidden field
// (R6), not another schema error at the same path.
func forbiddenReason(reason string) bool {
	return strings.Contains(reason, "the catalog forbids this field") || strings.Contains(reason, "anything else may be key material")
}
