package admin

import (
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/webhook"
)

// maxOverlap bounds a rotation overlap asked for in the request.
const maxOverlap = 7 * 24 * time.Hour

// newSecret makes a whsec_ secret and seals it for the endpoint_secret row (endpointID,
// secretID): the AAD binds the ciphertext to that row, as the sender expects when it opens it.
func (a *API) newSecret(endpointID, secretID string) (secret string, sealed []byte, err error) {
	secret, err = webhook.NewSecret()
	if err != nil {
		return "", nil, err
	}
	sealed, err = a.cfg.SecretKeys.Seal([]byte(secret), secretbox.AAD(endpointID, secretID))
	if err != nil {
		return "", nil, fmt.Errorf("admin: seal secret: %w", err)
	}
	return secret, sealed, nil
}

type rotateRequest struct {
	// OverlapSeconds overrides the configured overlap for this rotation; 0 ends the old
	// secrets at once.
	OverlapSeconds *int64 `json:"overlap_seconds"`
}

// rotationResponse is the rotate response, the one place the new secret appears.
type rotationResponse struct {
	ID                      string       `json:"id"`
	Secret                  string       `json:"secret"`
	CreatedAt               time.Time    `json:"created_at"`
	PreviousSecretsExpireAt *time.Time   `json:"previous_secrets_expire_at"`
	Endpoint                endpointView `json:"endpoint"`
}

// rotateSecret adds a new secret and gives the current ones an expiry at the end of the overlap
// (R17): until then the sender signs with both. Secrets already past their expiry are deleted.
func (a *API) rotateSecret(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req rotateRequest
	pid, eid, e := endpointRequest(r, &req, false)
	if e != nil {
		return e
	}
	overlap := a.cfg.RotationOverlap
	if req.OverlapSeconds != nil {
		if *req.OverlapSeconds < 0 || *req.OverlapSeconds > int64(maxOverlap/time.Second) {
			var p problems
			p.add("overlap_seconds", "must be from 0 to %d", int64(maxOverlap/time.Second))
			return p.err()
		}
		overlap = time.Duration(*req.OverlapSeconds) * time.Second
	}
	sid := newID(secretIDPrefix)
	secret, sealed, err := a.newSecret(eid, sid)
	if err != nil {
		return err
	}
	var out rotationResponse
	err = pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if _, err := loadEndpoint(r.Context(), tx, pid, eid, true); err != nil {
			return err
		}
		if _, err := tx.Exec(r.Context(), `DELETE FROM endpoint_secret WHERE endpoint_id = $1 AND expires_at <= now()`, eid); err != nil {
			return err
		}
		var expire time.Time
		if err := tx.QueryRow(r.Context(), `SELECT now() + $1 * interval '1 microsecond'`, overlap.Microseconds()).Scan(&expire); err != nil {
			return err
		}
		tag, err := tx.Exec(r.Context(), `UPDATE endpoint_secret SET expires_at = $2
			WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)`, eid, expire)
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			out.PreviousSecretsExpireAt = &expire
		}
		if err := tx.QueryRow(r.Context(), `INSERT INTO endpoint_secret (endpoint_id, id, secret_ciphertext)
			VALUES ($1, $2, $3) RETURNING created_at`, eid, sid, sealed).Scan(&out.CreatedAt); err != nil {
			return err
		}
		v, err := scanEndpoint(tx.QueryRow(r.Context(), `UPDATE endpoint SET version = version + 1, updated_at = now()
			WHERE id = $1 RETURNING `+endpointColumns, eid))
		if err != nil {
			return err
		}
		out.Endpoint = v
		return attachSecrets(r.Context(), tx, []*endpointView{&out.Endpoint})
	})
	if err != nil {
		return err
	}
	out.ID, out.Secret = sid, secret
	a.metrics.secretsOut.Inc()
	a.log.Info("endpoint secret rotated", "partner_id", pid, "endpoint_id", eid, "secret_id", sid, "overlap", overlap)
	respond(w, http.StatusOK, out)
	return nil
}

// endRotation ends the overlap now: every secret but the newest expires at once.
func (a *API) endRotation(w http.ResponseWriter, r *http.Request, _ caller) error {
	pid, eid, e := endpointRequest(r, &struct{}{}, false)
	if e != nil {
		return e
	}
	out, err := a.changeEndpoint(r.Context(), pid, eid, func(tx pgx.Tx, _ endpointView) (string, []any, bool, error) {
		tag, err := tx.Exec(r.Context(), `UPDATE endpoint_secret SET expires_at = now()
			WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())
			  AND id <> (SELECT id FROM endpoint_secret WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1)`, eid)
		// Only the version and updated_at move: the secrets changed.
		return "", nil, err == nil && tag.RowsAffected() > 0, err
	})
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}
