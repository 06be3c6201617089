package admin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/webhook"
)

// TestSecretShownOnce follows an endpoint's secrets through creation, reads, changes and two
// rotations: each secret appears in exactly one response (its creation or rotation) and in no
// log line, and the stored ciphertext opens with the AAD the sender uses (R16, R17).
func TestSecretShownOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	base := "/v1/partners/acme/endpoints"
	responses := &responseLog{e: e, key: key}
	do := responses.do

	var created createdEndpoint
	do(201, "POST", base, map[string]any{"url": "https://hooks.example.com/in", "event_types": []string{"customer.*"}}).json(t, &created)
	s1 := created.Secret
	if !strings.HasPrefix(s1, webhook.SecretPrefix) {
		t.Fatalf("creation secret %q lacks the whsec_ prefix", s1)
	}
	if _, err := webhook.ParseSecret(s1); err != nil {
		t.Fatalf("creation secret does not parse: %v", err)
	}
	ep := base + "/" + created.ID
	do(200, "GET", ep, nil)
	do(200, "GET", base, nil)
	do(200, "PATCH", ep, map[string]any{"description": "changed"})
	do(200, "POST", ep+"/disable", map[string]string{"reason": "receiver maintenance"})
	do(200, "POST", ep+"/enable", nil)

	var rot rotationResponse
	do(200, "POST", ep+"/secret/rotate", nil).json(t, &rot)
	s2 := rot.Secret
	if s2 == s1 || !strings.HasPrefix(s2, webhook.SecretPrefix) {
		t.Fatalf("rotation secret %q", s2)
	}
	if rot.PreviousSecretsExpireAt == nil {
		t.Fatal("rotation did not give the old secret an expiry")
	}
	if d := time.Until(rot.PreviousSecretsExpireAt.Time); d < 23*time.Hour || d > 25*time.Hour {
		t.Errorf("old secret expires in %s, want the 24h overlap", d)
	}
	var got endpointView
	do(200, "GET", ep, nil).json(t, &got)
	if len(got.Secrets) != 2 || got.Secrets[0].ExpiresAt == nil || got.Secrets[1].ExpiresAt != nil || got.Secrets[1].ID != rot.ID {
		t.Fatalf("secrets during the overlap: %+v", got.Secrets)
	}
	e.assertSealed(created.ID, map[string]string{got.Secrets[0].ID: s1, rot.ID: s2})

	do(200, "POST", ep+"/secret/end-rotation", nil).json(t, &got)
	if len(got.Secrets) != 2 || got.Secrets[0].ExpiresAt == nil || time.Until(got.Secrets[0].ExpiresAt.Time) > time.Second || got.Secrets[1].ExpiresAt != nil {
		t.Fatalf("secrets after end-rotation: %+v", got.Secrets)
	}

	// A rotation with no overlap; the already expired secret is removed.
	var rot2 rotationResponse
	do(200, "POST", ep+"/secret/rotate", map[string]int{"overlap_seconds": 0}).json(t, &rot2)
	s3 := rot2.Secret
	do(200, "GET", ep, nil).json(t, &got)
	if len(got.Secrets) != 2 || got.Secrets[1].ID != rot2.ID || got.Secrets[0].ID != rot.ID {
		t.Fatalf("secrets after a second rotation: %+v", got.Secrets)
	}
	do(200, "GET", base+"?limit=5", nil)

	for _, s := range []string{s1, s2, s3} {
		n := 0
		for _, b := range responses.bodies {
			n += strings.Count(b, s)
		}
		if n != 1 {
			t.Errorf("secret %.12s… appears in %d responses, want exactly 1", s, n)
		}
		raw := strings.TrimPrefix(s, webhook.SecretPrefix)
		if strings.Contains(e.logs.String(), raw) {
			t.Errorf("secret %.12s… appears in the log", s)
		}
	}
	if strings.Contains(e.logs.String(), key) {
		t.Error("the partner API key appears in the log")
	}
	if !strings.Contains(e.logs.String(), "endpoint secret rotated") {
		t.Error("the log was not captured (no rotation line)")
	}
}

// assertSealed opens each stored secret with the sender's AAD and compares it.
func (e *env) assertSealed(endpointID string, want map[string]string) {
	e.t.Helper()
	for id, plain := range want {
		var sealed []byte
		if err := e.DB.Pool.QueryRow(context.Background(), `SELECT secret_ciphertext FROM endpoint_secret WHERE endpoint_id = $1 AND id = $2`,
			endpointID, id).Scan(&sealed); err != nil {
			e.t.Fatal(err)
		}
		if strings.Contains(string(sealed), strings.TrimPrefix(plain, webhook.SecretPrefix)) {
			e.t.Fatalf("secret %s is stored in the clear", id)
		}
		opened, err := e.key.Open(sealed, secretbox.AAD(endpointID, id))
		if err != nil {
			e.t.Fatalf("secret %s does not open with the sender's AAD: %v", id, err)
		}
		if string(opened) != plain {
			e.t.Fatalf("secret %s opens to another value", id)
		}
	}
}
