package admin

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every route of Handler in OpenAPI 3.1. It is committed beside the
// code and checked against the router by TestOpenAPIMatchesRouter.
//
//go:embed openapi.json
var openAPIDocument []byte

// The webhooks section is made from the event catalog (make generate); the rest is written by
// hand.
//
//go:generate go run ./internal/webhookdoc/gen openapi.json

// OpenAPI returns the API's OpenAPI 3.1 document.
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }

func (a *API) serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ caller) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument)
	return nil
}
