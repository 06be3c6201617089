package adminclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/outbox"
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

// A partner method called for the operator's reserved partner reaches the operator's route,
// and the constant is outbox's.
func TestOperatorPaths(t *testing.T) {
	if adminclient.OperatorPartnerID != outbox.OperatorPartnerID {
		t.Fatalf("adminclient.OperatorPartnerID %q, outbox's %q", adminclient.OperatorPartnerID, outbox.OperatorPartnerID)
	}
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[],"next_cursor":"","has_more":false}`))
	}))
	defer srv.Close()
	c, err := adminclient.New(srv.URL, "t")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _ = c.ListEndpointsWithResponse(ctx, adminclient.OperatorPartnerID, nil)
	_, _ = c.GetDeliveryWithResponse(ctx, adminclient.OperatorPartnerID, "dlv_x")
	_, _ = c.ListEndpointsWithResponse(ctx, "acme", nil)
	want := []string{"/v1/operator/endpoints", "/v1/operator/deliveries/dlv_x", "/v1/partners/acme/endpoints"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %q, want %q", paths, want)
	}
}
