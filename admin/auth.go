package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/hookstream/hookstream/partnerkeys"
)

// access says who may call a route.
type access int

const (
	public     access = iota // no token (the OpenAPI document)
	anyCaller                // any valid token (catalog, limits)
	operator                 // the operator token only
	partnerOwn               // the operator, or a key of the {pid} in the path
)

// caller is the authenticated principal of a request.
type caller struct {
	operator  bool
	partnerID string // the key's partner; empty for the operator
	keyID     string
}

// actor names the caller in events and job records, never with a secret.
func (c caller) actor() string {
	if c.operator {
		return "operator"
	}
	return "partner_api_key:" + c.keyID
}

// authenticate resolves the bearer token of r. The operator token is compared in constant time
// (through its hash, so the length does not leak either); partner keys are found by their hash.
func (a *API) authenticate(ctx context.Context, r *http.Request) (caller, *apiError) {
	unauthorized := errorf(http.StatusUnauthorized, CodeUnauthorized, "a valid bearer token is required (Authorization: Bearer <token>)")
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return caller{}, unauthorized
	}
	token = strings.TrimSpace(token)
	if token == "" || len(token) > 512 {
		return caller{}, unauthorized
	}
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], a.operatorHash[:]) == 1 {
		return caller{operator: true}, nil
	}
	k, err := partnerkeys.Verify(ctx, a.pool, a.log, token)
	if errors.Is(err, partnerkeys.ErrUnknown) {
		return caller{}, unauthorized
	}
	if err != nil {
		return caller{}, a.fault(ctx, "authenticate", err)
	}
	return caller{partnerID: k.PartnerID, keyID: k.KeyID}, nil
}

// authorize applies a route's access rule. A partner key on an operator route gets 403 before
// anything is looked up, so the answer says nothing about the partner in the path. A partner key
// on another partner's path gets 404, exactly as a partner that does not exist (design.md
// section 10).
func (a *API) authorize(ctx context.Context, c caller, rule access, pid string) *apiError {
	switch rule {
	case operator:
		if !c.operator {
			return errorf(http.StatusForbidden, CodeForbidden, "this route needs the operator token")
		}
	case partnerOwn:
		if !c.operator {
			if c.partnerID != pid {
				return notFound("partner")
			}
			return nil // the key's partner exists: keys are deleted with it
		}
	}
	if pid == "" {
		return nil
	}
	if !partnerIDPattern.MatchString(pid) {
		return notFound("partner")
	}
	var exists bool
	if err := a.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM partner WHERE id = $1)`, pid).Scan(&exists); err != nil {
		return a.fault(ctx, "look up partner", err)
	}
	if !exists {
		return notFound("partner")
	}
	return nil
}
