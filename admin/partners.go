package admin

import (
	"errors"
	"net/http"
	"regexp"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
	"github.com/hookstream/hookstream/partnerkeys"
)

// partnerIDPattern is the partner table's CHECK constraint, checked here first for a clear 422.
var partnerIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

type partnerView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt timestamp `json:"created_at"`
}

type createPartnerRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (a *API) createPartner(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req createPartnerRequest
	if e := decodeBody(r, &req, true); e != nil {
		return e
	}
	var p problems
	if !partnerIDPattern.MatchString(req.ID) {
		p.add("id", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-'")
	}
	p.text("name", req.Name, 200, false)
	if e := p.err(); e != nil {
		return e
	}
	out := partnerView{ID: req.ID, Name: req.Name}
	err := a.pool.QueryRow(r.Context(), `INSERT INTO partner (id, name) VALUES ($1, $2)
		ON CONFLICT (id) DO NOTHING RETURNING created_at`, req.ID, req.Name).Scan(&out.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return conflict("partner %s already exists", req.ID)
	}
	if err != nil {
		return err
	}
	respondAt(w, http.StatusCreated, "/v1/partners/"+out.ID, out)
	return nil
}

type partnerCursor struct {
	ID string `json:"id"`
}

func (a *API) listPartners(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	var after partnerCursor
	limit, e := pageQuery(q, "partners", &after, func() bool { return partnerIDPattern.MatchString(after.ID) })
	if e != nil {
		return e
	}
	out, err := queryPage(r.Context(), a.pool, limit, func(row pgx.Row) (partnerView, error) {
		var v partnerView
		err := row.Scan(&v.ID, &v.Name, &v.CreatedAt)
		return v, err
	}, func(last partnerView) string {
		return encodeCursor("partners", partnerCursor{ID: last.ID})
	}, `SELECT id, name, created_at FROM partner WHERE id > $1 AND id <> $3 ORDER BY id LIMIT $2`, after.ID, limit+1, outbox.OperatorPartnerID)
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}

func (a *API) getPartner(w http.ResponseWriter, r *http.Request, _ caller) error {
	var v partnerView
	err := a.pool.QueryRow(r.Context(), `SELECT id, name, created_at FROM partner WHERE id = $1`, r.PathValue("pid")).
		Scan(&v.ID, &v.Name, &v.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("partner")
	}
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, v)
	return nil
}

type apiKeyView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	PartnerID  string     `json:"partner_id"`
	CreatedAt  timestamp  `json:"created_at"`
	LastUsedAt *timestamp `json:"last_used_at"`
	RevokedAt  *timestamp `json:"revoked_at"`
}

// createdAPIKey is the only response that ever holds a key.
type createdAPIKey struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Key       string    `json:"key"`
	PartnerID string    `json:"partner_id"`
	CreatedAt timestamp `json:"created_at"`
}

// createAPIKeyRequest names the key, so a partner's keys can be told apart (its use, its
// holder) in the list, which shows each one's last use.
type createAPIKeyRequest struct {
	Name string `json:"name"`
}

const maxAPIKeyName = 200

func (a *API) createAPIKey(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req createAPIKeyRequest
	if e := decodeBody(r, &req, false); e != nil {
		return e
	}
	var p problems
	p.text("name", req.Name, maxAPIKeyName, false)
	if e := p.err(); e != nil {
		return e
	}
	out := createdAPIKey{ID: newID(apiKeyIDPrefix), Name: req.Name, PartnerID: r.PathValue("pid")}
	var err error
	if out.Key, out.CreatedAt.Time, err = partnerkeys.Create(r.Context(), a.pool, out.ID, out.PartnerID, req.Name); err != nil {
		return err
	}
	a.log.Info("partner api key created", "partner_id", out.PartnerID, "key_id", out.ID)
	respondAt(w, http.StatusCreated, "/v1/partners/"+out.PartnerID+"/api-keys/"+out.ID, out)
	return nil
}

func (a *API) listAPIKeys(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	var after partnerCursor
	limit, e := pageQuery(q, "api-keys", &after, func() bool { return validID(apiKeyIDPrefix, after.ID) })
	if e != nil {
		return e
	}
	out, err := queryPage(r.Context(), a.pool, limit, func(row pgx.Row) (apiKeyView, error) {
		var v apiKeyView
		err := row.Scan(&v.ID, &v.Name, &v.PartnerID, &v.CreatedAt, &v.LastUsedAt, &v.RevokedAt)
		return v, err
	}, func(last apiKeyView) string {
		return encodeCursor("api-keys", partnerCursor{ID: last.ID})
	}, `SELECT id, name, partner_id, created_at, last_used_at, revoked_at FROM partner_api_key
		WHERE partner_id = $1 AND id > $2 ORDER BY id LIMIT $3`, r.PathValue("pid"), after.ID, limit+1)
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}

// getAPIKey shows one key of the partner, revoked or not (the Location of its creation).
func (a *API) getAPIKey(w http.ResponseWriter, r *http.Request, _ caller) error {
	if !validID(apiKeyIDPrefix, r.PathValue("kid")) {
		return notFound("api key")
	}
	var v apiKeyView
	err := a.pool.QueryRow(r.Context(), `SELECT id, name, partner_id, created_at, last_used_at, revoked_at FROM partner_api_key
		WHERE id = $1 AND partner_id = $2`, r.PathValue("kid"), r.PathValue("pid")).
		Scan(&v.ID, &v.Name, &v.PartnerID, &v.CreatedAt, &v.LastUsedAt, &v.RevokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("api key")
	}
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, v)
	return nil
}

// revokeAPIKey revokes a key at once; revoking a revoked key succeeds and changes nothing.
func (a *API) revokeAPIKey(w http.ResponseWriter, r *http.Request, _ caller) error {
	if !validID(apiKeyIDPrefix, r.PathValue("kid")) {
		return notFound("api key")
	}
	tag, err := a.pool.Exec(r.Context(), `UPDATE partner_api_key SET revoked_at = COALESCE(revoked_at, now())
		WHERE id = $1 AND partner_id = $2`, r.PathValue("kid"), r.PathValue("pid"))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("api key")
	}
	a.log.Info("partner api key revoked", "partner_id", r.PathValue("pid"), "key_id", r.PathValue("kid"))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
