package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// R15, R17 end to end: an endpoint created with `endpoints create --signature-scheme v1a`
// receives, through cdc, fanout and the sender, deliveries that an independent verifier written
// in JavaScript from the specification accepts with the public key the API shows, and so does
// webhook.Verifier. After a rotation both keys sign until the rotation ends, then only the new
// one; another endpoint's public key verifies nothing.
func TestV1aEndToEnd(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	var rx received
	srv := httptest.NewServer(rx.handler(func(int) int { return http.StatusNoContent }))
	defer srv.Close()
	res, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pa"})
	must(t, "create partner", res, err)

	create := func(path string) adminclient.EndpointCreated {
		t.Helper()
		status, stdout, stderr := cli(t, "endpoints", "create", "--url", srv.URL+path, "--events", "webhook.test",
			"--signature-scheme", "v1a", "--output", "json", "--admin-url", dev.adminURL, "--data-dir", dev.dataDir)
		if status != 0 {
			t.Fatalf("endpoints create: %d\n%s", status, stderr)
		}
		var ep adminclient.EndpointCreated
		if err := json.Unmarshal([]byte(stdout), &ep); err != nil {
			t.Fatal(err)
		}
		if ep.Secret != "" || ep.SignatureScheme != adminclient.EndpointCreatedSignatureSchemeV1A || strings.Contains(stdout, `"secret":`) {
			t.Fatalf("a v1a endpoint's creation: %s", stdout)
		}
		return ep
	}
	ep, other := create("/hooks"), create("/other")
	keys := func() []string {
		t.Helper()
		res, err := dev.api.GetSigningKeysWithResponse(ctx, "pa", ep.ID)
		must(t, "signing keys", res, err)
		var out []string
		for _, k := range res.JSON200.Keys {
			if k.PublicKey == nil {
				t.Fatalf("a v1a endpoint's key without a public key: %+v", k)
			}
			out = append(out, *k.PublicKey)
		}
		return out
	}
	first := keys()
	otherKey := *other.Secrets[0].PublicKey
	if len(first) != 1 || first[0] != *ep.Secrets[0].PublicKey || first[0] == otherKey {
		t.Fatalf("keys %v, creation showed %v", first, *ep.Secrets[0].PublicKey)
	}

	// test sends a webhook.test to the endpoint and returns it as received.
	test := func(n int) testenv.SignedMessage {
		t.Helper()
		time.Sleep(500 * time.Millisecond) // the endpoint's latest record reaches the sender's view
		res, err := dev.api.SendTestEventWithResponse(ctx, "pa", ep.ID, adminclient.Empty{})
		must(t, "test event", res, err)
		m := rx.waitFor(t, n, 60*time.Second)[n-1]
		return testenv.SignedMessage{Header: m.header, Body: m.body}
	}
	check := func(what string, m testenv.SignedMessage, entries int, accepted, refused []string) {
		t.Helper()
		if got := strings.Fields(m.Header.Get(webhook.HeaderSignature)); len(got) != entries || !strings.HasPrefix(got[0], "v1a,") {
			t.Fatalf("%s: webhook-signature %q, want %d v1a entries", what, got, entries)
		}
		for _, key := range append(append([]string(nil), accepted...), refused...) {
			ok := !strings.Contains(strings.Join(refused, " "), key)
			v, err := webhook.NewVerifier([]string{key})
			if err != nil {
				t.Fatal(err)
			}
			goErr := v.VerifyHeader(m.Header, m.Body)
			nodeErr := testenv.NodeVerifyV1a(t, []string{key}, time.Now(), webhook.DefaultTolerance, m)[0]
			if ok != (goErr == nil) || ok != (nodeErr == nil) {
				t.Errorf("%s, key %.16s…: webhook.Verifier %v, Node %v; want accepted=%t", what, key, goErr, nodeErr, ok)
			}
		}
	}
	check("first delivery", test(1), 1, first, []string{otherKey})

	rot, err := dev.api.RotateSecretWithResponse(ctx, "pa", ep.ID, adminclient.RotateRequest{})
	must(t, "rotate", rot, err)
	if rot.JSON200.PublicKey == nil || rot.JSON200.Secret != "" {
		t.Fatalf("rotation of a v1a endpoint: %s", rot.Body)
	}
	second := *rot.JSON200.PublicKey
	if k := keys(); len(k) != 2 || k[0] != second || k[1] != first[0] {
		t.Fatalf("keys during the overlap: %v", k)
	}
	check("during the overlap", test(2), 2, []string{first[0], second}, []string{otherKey})

	end, err := dev.api.EndRotationWithResponse(ctx, "pa", ep.ID, adminclient.Empty{})
	must(t, "end rotation", end, err)
	check("after the rotation", test(3), 1, []string{second}, []string{first[0], otherKey})
}
