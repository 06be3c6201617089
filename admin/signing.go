package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/webhook"
)

// Signature schemes of an endpoint (design.md section 7): v1 signs with an HMAC secret the
// receiver shares, v1a with an ed25519 key whose public half is all the receiver holds.
const (
	schemeHMAC    = "v1"
	schemeEd25519 = "v1a"
)

// signatureScheme checks a requested scheme; none is v1, the default.
func (p *problems) signatureScheme(v *string) string {
	if v == nil {
		return schemeHMAC
	}
	if *v != schemeHMAC && *v != schemeEd25519 {
		p.add("signature_scheme", `must be "v1" (HMAC-SHA256, a shared whsec_ secret) or "v1a" (ed25519, a whpk_ public key)`)
	}
	return *v
}

// signingKey is a fresh key for an endpoint_secret row, sealed for that row.
type signingKey struct {
	secret    string  // the whsec_ secret of a v1 key, shown once; "" for v1a, whose signing key is never shown
	publicKey *string // the whpk_ public key of a v1a key; nil for v1
	sealed    []byte
}

// newSigningKey makes a key of scheme and seals what signs (the whsec_ secret or the whsk_
// signing key) for the endpoint_secret row (endpointID, secretID): the AAD binds the ciphertext
// to that row, as the sender expects when it opens it (R16).
func (a *API) newSigningKey(endpointID, secretID, scheme string) (signingKey, error) {
	var (
		k     signingKey
		plain string
		err   error
	)
	if scheme == schemeEd25519 {
		var pub string
		plain, pub, err = webhook.NewKeyPair()
		k.publicKey = &pub
	} else {
		plain, err = webhook.NewSecret()
		k.secret = plain
	}
	if err != nil {
		return signingKey{}, err
	}
	if k.sealed, err = a.cfg.SecretKeys.Seal([]byte(plain), secretbox.AAD(endpointID, secretID)); err != nil {
		return signingKey{}, fmt.Errorf("admin: seal signing key: %w", err)
	}
	return k, nil
}

// insertSigningKey stores a new key of the endpoint, returning when it was created.
func insertSigningKey(ctx context.Context, tx pgx.Tx, eid, sid string, k signingKey) (created time.Time, err error) {
	err = tx.QueryRow(ctx, `INSERT INTO endpoint_secret (endpoint_id, id, secret_ciphertext, public_key)
		VALUES ($1, $2, $3, $4) RETURNING created_at`, eid, sid, k.sealed, k.publicKey).Scan(&created)
	return created, err
}

// rotation is what rotateKeys did: the new key and when the previous ones stop signing (nil
// when there were none still signing).
type rotation struct {
	id              string
	key             signingKey
	createdAt       time.Time
	previousExpires *time.Time
}

// rotateKeys adds a new key of scheme to the endpoint and gives the current ones an expiry at
// the end of the overlap (R17): until then the sender signs with all of them, whatever their
// schemes. Keys already past their expiry are deleted. The caller holds the endpoint's row lock
// and moves its version.
func (a *API) rotateKeys(ctx context.Context, tx pgx.Tx, eid, scheme string, overlap time.Duration) (rotation, error) {
	r := rotation{id: newID(secretIDPrefix)}
	var err error
	if r.key, err = a.newSigningKey(eid, r.id, scheme); err != nil {
		return rotation{}, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM endpoint_secret WHERE endpoint_id = $1 AND expires_at <= now()`, eid); err != nil {
		return rotation{}, err
	}
	var expire time.Time
	if err := tx.QueryRow(ctx, `SELECT now() + $1 * interval '1 microsecond'`, overlap.Microseconds()).Scan(&expire); err != nil {
		return rotation{}, err
	}
	tag, err := tx.Exec(ctx, `UPDATE endpoint_secret SET expires_at = $2
		WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)`, eid, expire)
	if err != nil {
		return rotation{}, err
	}
	if tag.RowsAffected() > 0 {
		r.previousExpires = &expire
	}
	r.createdAt, err = insertSigningKey(ctx, tx, eid, r.id, r.key)
	return r, err
}

// switchScheme rotates the endpoint to a key of scheme, with the configured overlap, when its
// newest key is of the other scheme; it returns the new whsec_ secret when one was made (shown
// once, in the PATCH answer). A PATCH naming the scheme the endpoint has changes no key.
func (a *API) switchScheme(ctx context.Context, tx pgx.Tx, eid, scheme string) (secret string, err error) {
	var newestIsEd25519 bool
	err = tx.QueryRow(ctx, `SELECT public_key IS NOT NULL FROM endpoint_secret WHERE endpoint_id = $1
		ORDER BY created_at DESC, id DESC LIMIT 1`, eid).Scan(&newestIsEd25519)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", err
	}
	if err == nil && newestIsEd25519 == (scheme == schemeEd25519) {
		return "", nil
	}
	r, err := a.rotateKeys(ctx, tx, eid, scheme, a.cfg.RotationOverlap)
	if err != nil {
		return "", err
	}
	a.log.Info("endpoint signature scheme changed", "endpoint_id", eid, "scheme", scheme, "secret_id", r.id,
		"overlap", a.cfg.RotationOverlap)
	return r.key.secret, nil
}

// keyView is one signing key as the keys routes show it: never what signs, only what verifies.
type keyView struct {
	EndpointID string     `json:"endpoint_id"`
	ID         string     `json:"id"`
	Scheme     string     `json:"scheme"`
	PublicKey  *string    `json:"public_key"`
	CreatedAt  timestamp  `json:"created_at"`
	ExpiresAt  *timestamp `json:"expires_at"`
}

// signingKeys is the answer of GET …/secret/keys.
type signingKeys struct {
	EndpointID      string    `json:"endpoint_id"`
	SignatureScheme string    `json:"signature_scheme"`
	Keys            []keyView `json:"keys"`
}

const keyColumns = `endpoint_id, id, CASE WHEN public_key IS NULL THEN 'v1' ELSE 'v1a' END, public_key, created_at, expires_at`

func scanKey(row pgx.Row) (keyView, error) {
	var k keyView
	err := row.Scan(&k.EndpointID, &k.ID, &k.Scheme, &k.PublicKey, &k.CreatedAt, &k.ExpiresAt)
	return k, err
}

// getSigningKeys lists the endpoint's keys that sign now (expires_at unset or ahead), newest
// first, with the public key of each v1a key: what a receiver configures its verifier with.
func (a *API) getSigningKeys(w http.ResponseWriter, r *http.Request, _ caller) error {
	v, err := loadEndpoint(r.Context(), a.pool, r.PathValue("pid"), r.PathValue("eid"), false)
	if err != nil {
		return err
	}
	rows, err := a.pool.Query(r.Context(), `SELECT `+keyColumns+` FROM endpoint_secret
		WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())
		ORDER BY created_at DESC, id DESC`, v.ID)
	if err != nil {
		return err
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (keyView, error) { return scanKey(row) })
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, signingKeys{EndpointID: v.ID, SignatureScheme: v.SignatureScheme, Keys: keys})
	return nil
}

type publicKeyCursor struct {
	EndpointID string `json:"e"`
	ID         string `json:"id"`
}

// listPublicKeys lists the public keys of every v1a key of the partner's endpoints that signs
// now, by endpoint: one place for a partner's receivers to fetch what they trust.
func (a *API) listPublicKeys(w http.ResponseWriter, r *http.Request, _ caller) error {
	after := publicKeyCursor{}
	limit, e := pageQuery(r.URL.Query(), "public-keys", &after, func() bool { return validID(endpointIDPrefix, after.EndpointID) })
	if e != nil {
		return e
	}
	out, err := queryPage(r.Context(), a.pool, limit, scanKey, func(last keyView) string {
		return encodeCursor("public-keys", publicKeyCursor{EndpointID: last.EndpointID, ID: last.ID})
	}, `SELECT s.endpoint_id, s.id, 'v1a', s.public_key, s.created_at, s.expires_at FROM endpoint_secret s JOIN endpoint e ON e.id = s.endpoint_id
		WHERE e.partner_id = $1 AND s.public_key IS NOT NULL AND (s.expires_at IS NULL OR s.expires_at > now())
		  AND ($2 = '' OR (s.endpoint_id, s.id) > ($2, $3))
		ORDER BY s.endpoint_id, s.id LIMIT $4`, r.PathValue("pid"), after.EndpointID, after.ID, limit+1)
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}
