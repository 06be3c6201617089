package endpoints_test

import (
	"testing"

	"github.com/hookstream/hookstream/endpoints"
)

// The schema-version seam: the pinned version of version 1 is the body itself, byte for byte;
// a version with no conversion is refused, not silently changed (R14).
func TestConvertEnvelope(t *testing.T) {
	body := []byte(`{"event_id":"evt_x","data":{"a":1}}`)
	got, err := endpoints.ConvertEnvelope(body, 1, 1)
	if err != nil || &got[0] != &body[0] {
		t.Fatalf("same version: %s %v (must be the same bytes)", got, err)
	}
	if _, err := endpoints.ConvertEnvelope(body, 2, 1); err == nil {
		t.Fatal("conversion from an unknown version accepted")
	}
}
