package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/webhook"
)

// R16, R17: a v1a endpoint's signing key is made and sealed by the server and appears in no
// response and no log line; its public key is readable on the endpoint, its keys route and the
// partner's public-key route; rotation and a change of scheme add a key of the right scheme
// while the current ones sign on for the overlap.
func TestV1aEndpointKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.partner("acme")
	other := e.partner("globex")
	base := "/v1/partners/acme/endpoints"
	responses := &responseLog{e: e, key: key}
	do := responses.do

	raw := do(201, "POST", base, map[string]any{"url": "https://hooks.example.com/in", "event_types": []string{"customer.*"},
		"signature_scheme": "v1a"})
	var created createdEndpoint
	raw.json(t, &created)
	if strings.Contains(string(raw.Body), `"secret":`) || created.SignatureScheme != schemeEd25519 {
		t.Fatalf("a v1a endpoint's creation: %s", raw.Body)
	}
	if len(created.Secrets) != 1 || created.Secrets[0].PublicKey == nil || !strings.HasPrefix(*created.Secrets[0].PublicKey, webhook.PublicKeyPrefix) {
		t.Fatalf("creation shows no public key: %+v", created.Secrets)
	}
	pub1 := *created.Secrets[0].PublicKey
	if _, err := webhook.ParsePublicKey(pub1); err != nil {
		t.Fatal(err)
	}
	ep := base + "/" + created.ID
	keysOf := func() signingKeys {
		var k signingKeys
		do(200, "GET", ep+"/secret/keys", nil).json(t, &k)
		return k
	}
	if k := keysOf(); k.SignatureScheme != schemeEd25519 || len(k.Keys) != 1 || k.Keys[0].Scheme != schemeEd25519 ||
		*k.Keys[0].PublicKey != pub1 || k.Keys[0].ID != created.Secrets[0].ID {
		t.Fatalf("keys of a new v1a endpoint: %+v", k)
	}
	hmacEndpoint := e.endpoint("acme", "customer.*")

	// Rotation: a new key pair; both sign until the overlap ends.
	var rot rotationResponse
	raw = do(200, "POST", ep+"/secret/rotate", nil)
	raw.json(t, &rot)
	if rot.Scheme != schemeEd25519 || rot.Secret != "" || rot.PublicKey == nil || *rot.PublicKey == pub1 || rot.PreviousSecretsExpireAt == nil ||
		strings.Contains(string(raw.Body), `"secret":`) {
		t.Fatalf("rotation of a v1a endpoint: %s", raw.Body)
	}
	pub2 := *rot.PublicKey
	k := keysOf()
	if len(k.Keys) != 2 || *k.Keys[0].PublicKey != pub2 || *k.Keys[1].PublicKey != pub1 || k.Keys[1].ExpiresAt == nil || k.Keys[0].ExpiresAt != nil {
		t.Fatalf("keys during the overlap: %+v", k.Keys)
	}

	// The partner's public keys: both of this endpoint, none of its v1 endpoint; another
	// partner reaches none of them.
	var list struct {
		Data []keyView `json:"data"`
	}
	do(200, "GET", "/v1/partners/acme/public-keys", nil).json(t, &list)
	got := map[string]bool{}
	for _, kv := range list.Data {
		if kv.EndpointID != created.ID || kv.Scheme != schemeEd25519 {
			t.Errorf("public-keys lists %+v", kv)
		}
		got[*kv.PublicKey] = true
	}
	if len(list.Data) != 2 || !got[pub1] || !got[pub2] {
		t.Fatalf("public-keys: %+v", list.Data)
	}
	var page struct {
		Data       []keyView `json:"data"`
		NextCursor string    `json:"next_cursor"`
		HasMore    bool      `json:"has_more"`
	}
	do(200, "GET", "/v1/partners/acme/public-keys?limit=1", nil).json(t, &page)
	if len(page.Data) != 1 || !page.HasMore {
		t.Fatalf("a page of one: %+v", page)
	}
	first := page.Data[0].ID
	do(200, "GET", "/v1/partners/acme/public-keys?limit=1&cursor="+page.NextCursor, nil).json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID == first || page.HasMore {
		t.Fatalf("the second page: %+v", page)
	}
	e.must(404, other, "GET", "/v1/partners/acme/public-keys", nil)
	e.must(404, other, "GET", ep+"/secret/keys", nil)

	// Back to v1: a whsec_ secret, shown in the PATCH answer only; the v1a keys sign on for the
	// overlap. The same scheme again changes no key.
	var patched patchedEndpoint
	do(200, "PATCH", ep, map[string]any{"signature_scheme": "v1"}).json(t, &patched)
	if patched.SignatureScheme != schemeHMAC || !strings.HasPrefix(patched.Secret, webhook.SecretPrefix) {
		t.Fatalf("PATCH to v1: scheme %q, secret %.10q", patched.SignatureScheme, patched.Secret)
	}
	k = keysOf()
	if len(k.Keys) != 3 || k.Keys[0].Scheme != schemeHMAC || k.Keys[0].PublicKey != nil || k.Keys[1].ExpiresAt == nil || k.Keys[2].ExpiresAt == nil {
		t.Fatalf("keys after the move to v1: %+v", k.Keys)
	}
	raw = do(200, "PATCH", ep, map[string]any{"signature_scheme": "v1"})
	if strings.Contains(string(raw.Body), `"secret":`) || len(keysOf().Keys) != 3 {
		t.Fatalf("PATCH to the scheme it has made a key: %s", raw.Body)
	}
	// And v1 to v1a on the endpoint created v1.
	raw = do(200, "PATCH", base+"/"+hmacEndpoint.ID, map[string]any{"signature_scheme": "v1a"})
	raw.json(t, &patched)
	if strings.Contains(string(raw.Body), `"secret":`) || patched.SignatureScheme != schemeEd25519 || len(patched.Secrets) != 2 ||
		patched.Secrets[1].PublicKey == nil || patched.Secrets[0].ExpiresAt == nil {
		t.Fatalf("PATCH v1 to v1a: %s", raw.Body)
	}

	for _, bad := range []struct{ method, path string }{{"POST", base}, {"PATCH", ep}} {
		r := e.must(422, key, bad.method, bad.path, map[string]any{"url": "https://hooks.example.com/in", "event_types": []string{"*"},
			"signature_scheme": "v2a"})
		if !strings.Contains(string(r.Body), "signature_scheme") {
			t.Errorf("%s with an unknown scheme: %s", bad.method, r.Body)
		}
	}

	// Every stored v1a key opens with the sender's AAD to a signing key whose public key is the
	// one shown, and no signing key appears in a response or the log.
	rows, err := e.DB.Pool.Query(context.Background(), `SELECT endpoint_id, id, secret_ciphertext, public_key FROM endpoint_secret WHERE public_key IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			eid, sid, pub string
			sealed        []byte
		)
		if err := rows.Scan(&eid, &sid, &sealed, &pub); err != nil {
			t.Fatal(err)
		}
		opened, err := e.key.Open(sealed, secretbox.AAD(eid, sid))
		if err != nil {
			t.Fatalf("key %s does not open with the sender's AAD: %v", sid, err)
		}
		signing := string(opened)
		if derived, err := webhook.PublicKeyOf(signing); err != nil || derived != pub {
			t.Fatalf("key %s: stored public key %s, its signing key's %s (%v)", sid, pub, derived, err)
		}
		bare := strings.TrimPrefix(signing, webhook.SigningKeyPrefix)
		if strings.Contains(string(sealed), bare) {
			t.Fatalf("key %s is stored in the clear", sid)
		}
		for _, b := range responses.bodies {
			if strings.Contains(b, bare) || strings.Contains(b, bare[:43]) {
				t.Fatalf("a signing key appears in a response: %s", b)
			}
		}
		if strings.Contains(e.logs.String(), bare[:43]) {
			t.Fatal("a signing key appears in the log")
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d v1a keys stored, want 3", n)
	}
	if !strings.Contains(e.logs.String(), "endpoint signature scheme changed") {
		t.Error("the log was not captured (no scheme change line)")
	}
}
