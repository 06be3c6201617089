package admin

import (
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// maxOverlap bounds a rotation overlap asked for in the request.
const maxOverlap = 7 * 24 * time.Hour

type rotateRequest struct {
	// OverlapSeconds overrides the configured overlap for this rotation; 0 ends the old
	// secrets at once.
	OverlapSeconds *int64 `json:"overlap_seconds"`
}

// rotationResponse is the rotate response, the one place a new v1 secret appears; a new v1a
// key shows its public key instead, its signing key never.
type rotationResponse struct {
	ID                      string       `json:"id"`
	Scheme                  string       `json:"scheme"`
	Secret                  string       `json:"secret,omitempty"`
	PublicKey               *string      `json:"public_key,omitempty"`
	CreatedAt               timestamp    `json:"created_at"`
	PreviousSecretsExpireAt *timestamp   `json:"previous_secrets_expire_at"`
	Endpoint                endpointView `json:"endpoint"`
}

// rotateSecret adds a new key of the endpoint's signature scheme and gives the current ones an
// expiry at the end of the overlap (R17): until then the sender signs with all of them.
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
	var (
		out rotationResponse
		rot rotation
	)
	err := pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		cur, err := loadEndpoint(r.Context(), tx, pid, eid, true)
		if err != nil {
			return err
		}
		if rot, err = a.rotateKeys(r.Context(), tx, eid, cur.SignatureScheme, overlap); err != nil {
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
	out.ID, out.Scheme, out.CreatedAt, out.PreviousSecretsExpireAt = rot.id, out.Endpoint.SignatureScheme, stamp(rot.createdAt), stampPtr(rot.previousExpires)
	out.Secret, out.PublicKey = rot.key.secret, rot.key.publicKey
	if out.Secret != "" {
		a.metrics.secretsOut.Inc()
	}
	a.log.Info("endpoint secret rotated", "partner_id", pid, "endpoint_id", eid, "secret_id", rot.id, "scheme", out.Scheme, "overlap", overlap)
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
