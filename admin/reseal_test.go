package admin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestResealCountsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	e, both, onlyNew := keyedEnv(t)
	e.partner("acme")
	var ids []string
	for range 3 {
		ids = append(ids, e.endpoint("acme").ID)
	}
	e.must(200, operatorToken, "PATCH", "/v1/partners/acme/endpoints/"+ids[1], map[string]any{
		"auth": map[string]any{"type": "header", "header_name": "X-Key", "value": testHeaderSecret}})
	ctx := context.Background()
	rep, err := Reseal(ctx, e.DB.Pool, both, 2, nil)
	if err != nil || rep.SigningSecrets != (ResealCount{Resealed: 3}) || rep.RequestOptions != (ResealCount{Resealed: 1}) {
		t.Fatalf("first reseal: %+v, %v", rep, err)
	}
	rep, err = Reseal(ctx, e.DB.Pool, both, 2, nil)
	if err != nil || rep.SigningSecrets != (ResealCount{Current: 3}) || rep.RequestOptions != (ResealCount{Current: 1}) {
		t.Fatalf("second reseal: %+v, %v", rep, err)
	}
	e.checkOpens(t, onlyNew)

	// A value under a key the keyring lacks is named by row and key id, the others still done.
	rep, err = Reseal(ctx, e.DB.Pool, e.key, 2, nil)
	if !errors.Is(err, ErrUnopened) || len(rep.Unopened) != 4 || !strings.Contains(rep.Unopened[0], `key id "k2"`) {
		t.Fatalf("reseal without k2: %+v, %v", rep, err)
	}
}

// A row the admin API changes between the reseal's read and its write is read again and
// resealed from its new value: the write never puts back the stale one.
func TestResealDoesNotOverwriteAConcurrentChange(t *testing.T) {
	t.Parallel()
	e, both, onlyNew := keyedEnv(t)
	e.partner("acme")
	ep := e.endpoint("acme")
	e.must(200, operatorToken, "PATCH", "/v1/partners/acme/endpoints/"+ep.ID, map[string]any{
		"auth": map[string]any{"type": "header", "header_name": "X-Key", "value": testHeaderSecret}})
	ctx := context.Background()
	pool := e.DB.Pool

	// Signing secret: the reseal read v0; the API then replaced it (a rotation's new secret in
	// the same row would do the same).
	var sid string
	var v0 []byte
	if err := pool.QueryRow(ctx, `SELECT id, secret_ciphertext FROM endpoint_secret WHERE endpoint_id = $1`, ep.ID).Scan(&sid, &v0); err != nil {
		t.Fatal(err)
	}
	v1, err := e.key.Seal([]byte("whsec_changedmeanwhile"), secretbox.AAD(ep.ID, sid))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE endpoint_secret SET secret_ciphertext = $2 WHERE endpoint_id = $1`, ep.ID, v1); err != nil {
		t.Fatal(err)
	}
	r := &resealer{pool: pool, keys: both, batch: 10, rep: &ResealReport{}}
	var c ResealCount
	if err := r.resealRow(ctx, "secret", v0, secretbox.AAD(ep.ID, sid), &c, r.swapSecret(ep.ID, sid), r.rereadSecret(ep.ID, sid)); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := pool.QueryRow(ctx, `SELECT secret_ciphertext FROM endpoint_secret WHERE endpoint_id = $1`, ep.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if got, err := onlyNew.Open(stored, secretbox.AAD(ep.ID, sid)); err != nil || string(got) != "whsec_changedmeanwhile" || c.Resealed != 1 {
		t.Fatalf("stored secret opens to %q (%v), resealed %d; want the concurrent value under k2", got, err, c.Resealed)
	}

	// Request options: the reseal read them; the API then changed the header name.
	var opts0 string
	if err := pool.QueryRow(ctx, `SELECT request_options::text FROM endpoint WHERE id = $1`, ep.ID).Scan(&opts0); err != nil {
		t.Fatal(err)
	}
	e.must(200, operatorToken, "PATCH", "/v1/partners/acme/endpoints/"+ep.ID, map[string]any{
		"auth": map[string]any{"type": "header", "header_name": "X-Other-Key", "value": testHeaderSecret + "2"}})
	if err := r.endpointOptions(ctx, ep.ID, []byte(opts0)); err != nil {
		t.Fatal(err)
	}
	var opts records.RequestOptions
	if err := pool.QueryRow(ctx, `SELECT request_options FROM endpoint WHERE id = $1`, ep.ID).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.Auth == nil || opts.Auth.HeaderName != "X-Other-Key" {
		t.Fatalf("request options after the reseal: %+v; the concurrent change is lost", opts.Auth)
	}
	if got, err := onlyNew.Open(opts.Auth.SecretCiphertext, records.AuthAAD(ep.ID)); err != nil || string(got) != testHeaderSecret+"2" {
		t.Fatalf("auth secret opens to %q, %v; want the concurrent value under k2", got, err)
	}
}

// keyedEnv is an env whose API seals under a key given as HOOKSTREAM_SECRET_KEY alone (id
// default), and the keyrings of the rotation: a new key k2 active beside it, and k2 alone.
func keyedEnv(t *testing.T) (e *env, both, onlyNew secretbox.Keyring) {
	t.Helper()
	e = newEnv(t)
	oldRaw, oldRing := testenv.SecretKey(t)
	e.cfg.SecretKeys, e.key = oldRing, oldRing
	e.api = e.newAPI()
	newRaw, _ := testenv.SecretKey(t)
	old, err := secretbox.ParseKey(oldRaw)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := secretbox.ParseKey(newRaw)
	if err != nil {
		t.Fatal(err)
	}
	if both, err = secretbox.NewKeyring("k2", []secretbox.NamedKey{{ID: secretbox.DefaultKeyID, Key: old}, {ID: "k2", Key: k2}}); err != nil {
		t.Fatal(err)
	}
	if onlyNew, err = secretbox.NewKeyring("", []secretbox.NamedKey{{ID: "k2", Key: k2}}); err != nil {
		t.Fatal(err)
	}
	return e, both, onlyNew
}

// checkOpens checks that every stored signing and auth secret names k2 and opens with keys.
func (e *env) checkOpens(t *testing.T, keys secretbox.Keyring) {
	t.Helper()
	rows, err := e.DB.Pool.Query(context.Background(), `SELECT endpoint_id, id, secret_ciphertext FROM endpoint_secret`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var eid, sid string
		var v []byte
		if err := rows.Scan(&eid, &sid, &v); err != nil {
			t.Fatal(err)
		}
		if id, _ := secretbox.KeyID(v); id != "k2" {
			t.Errorf("%s/%s under %q", eid, sid, id)
		}
		if _, err := keys.Open(v, secretbox.AAD(eid, sid)); err != nil {
			t.Errorf("%s/%s: %v", eid, sid, err)
		}
	}
}
