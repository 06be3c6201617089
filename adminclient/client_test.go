package adminclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

const operatorToken = "operator-token-for-the-client-tests"

// adminServer serves the real admin API over HTTP with PostgreSQL and Kafka never reached (lazy
// connections): enough for the answers decided before any query. The end-to-end tests of
// cmd/hookstream use the client against a whole running hookstream.
func adminServer(t *testing.T) string {
	t.Helper()
	pool := testenv.UnreachablePool(t)
	_, key := testenv.SecretKey(t)
	guard, err := egress.New(egress.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := admin.DefaultConfig()
	cfg.Brokers, cfg.OperatorToken, cfg.SecretKeys, cfg.Egress = []string{"127.0.0.1:1"}, operatorToken, key, guard
	cfg.Registerer = prometheus.NewRegistry()
	a, err := admin.New(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	mux := http.NewServeMux()
	mux.Handle("/v1/", a.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClientSendsTheTokenAndCheckReadsRefusals(t *testing.T) {
	url := adminServer(t)
	ctx := context.Background()

	c, err := adminclient.New(url, operatorToken)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := c.GetOpenAPIWithResponse(ctx)
	if err := adminclient.Check(doc, err); err != nil || string(doc.Body) != string(admin.OpenAPI()) {
		t.Fatalf("GET /v1/openapi.json: %v, %d bytes", err, len(doc.Body))
	}

	// With the operator token the request passes authentication and is refused for its body.
	res, err := c.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "has space"})
	var apiErr *adminclient.APIError
	if err := adminclient.Check(res, err); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity ||
		apiErr.Problem.Code != adminclient.ProblemCodeValidationFailed || res.ApplicationProblemJSON422 == nil {
		t.Fatalf("a partner id with a space: %v (%+v)", err, apiErr)
	}

	// Another token is refused with 401, as the API's error.
	bad, err := adminclient.New(url, "not-the-operator-token")
	if err != nil {
		t.Fatal(err)
	}
	list, err := bad.ListPartnersWithResponse(ctx, nil)
	if err := adminclient.Check(list, err); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized ||
		apiErr.Problem.Code != adminclient.ProblemCodeUnauthorized || list.ApplicationProblemJSON401 == nil {
		t.Fatalf("a wrong token: %v", err)
	}

	// A request never made is its transport error, not an APIError.
	down, _ := adminclient.New("http://127.0.0.1:1", operatorToken)
	if err := adminclient.Check(down.ListPartnersWithResponse(ctx, nil)); err == nil || errors.As(err, &apiErr) {
		t.Fatalf("an unreachable server: %v", err)
	}
}
