package sender_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// R15, R17: deliveries of a v1a endpoint are signed with ed25519 over the exact bytes sent and
// verify with the endpoint's public key alone, both in webhook.Verifier and in an independent
// verifier written in JavaScript from the specification. During a rotation both keys sign (two
// v1a entries) and either public key verifies; after it only the new key signs. A tampered body
// and another endpoint's public key are refused by both verifiers.
func TestV1aDeliveriesVerifyWithThePublicKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now().UTC()
	type pair struct{ signing, public string }
	newPair := func() pair {
		sk, pk, err := webhook.NewKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		return pair{sk, pk}
	}
	oldKey, newKey, stranger := newPair(), newPair(), newPair()
	soon, past := now.Add(time.Hour), now.Add(-time.Minute)
	e.endpoint("ep_overlap", "p_a", func(ep *records.Endpoint) {
		ep.Secrets = []records.Secret{
			e.seal(ep.ID, "sec_old", oldKey.signing, now.Add(-24*time.Hour), &soon),
			e.seal(ep.ID, "sec_new", newKey.signing, now, nil),
		}
	})
	e.endpoint("ep_after", "p_a", func(ep *records.Endpoint) {
		ep.Secrets = []records.Secret{
			e.seal(ep.ID, "sec_old", oldKey.signing, now.Add(-24*time.Hour), &past),
			e.seal(ep.ID, "sec_new", newKey.signing, now, nil),
		}
	})
	e.start(e.config())
	during, after := delivery("p_a", "ep_overlap", "customer.created"), delivery("p_a", "ep_after", "customer.updated")
	e.deliver(0, during)
	e.deliver(1, after)
	for _, d := range []records.Delivery{during, after} {
		if a := e.waitAttempt(d); a.Outcome != records.OutcomeDelivered {
			t.Fatalf("attempt %+v, want delivered", a)
		}
	}
	received := func(endpointID string) testenv.SignedMessage {
		got := e.rcv.got(endpointID)
		if len(got) != 1 {
			t.Fatalf("%s received %d requests", endpointID, len(got))
		}
		return testenv.SignedMessage{Header: got[0].header, Body: got[0].body}
	}
	overlap, single := received("ep_overlap"), received("ep_after")
	for name, m := range map[string]testenv.SignedMessage{"during the overlap": overlap, "after it": single} {
		want := map[string]int{"during the overlap": 2, "after it": 1}[name]
		entries := strings.Fields(m.Header.Get(webhook.HeaderSignature))
		for _, entry := range entries {
			if !strings.HasPrefix(entry, "v1a,") {
				t.Fatalf("%s: entry %q is not v1a", name, entry)
			}
		}
		if len(entries) != want {
			t.Fatalf("%s: %d signatures, want %d", name, len(entries), want)
		}
	}
	tampered := overlap
	tampered.Body = append([]byte(nil), overlap.Body...)
	tampered.Body[len(tampered.Body)-2] ^= 1

	cases := []struct {
		name   string
		msg    testenv.SignedMessage
		key    string
		accept bool
	}{
		{"overlap, old public key", overlap, oldKey.public, true},
		{"overlap, new public key", overlap, newKey.public, true},
		{"after, new public key", single, newKey.public, true},
		{"after, old public key", single, oldKey.public, false},
		{"tampered body", tampered, newKey.public, false},
		{"another endpoint's public key", overlap, stranger.public, false},
	}
	for _, c := range cases {
		v, err := webhook.NewVerifier([]string{c.key})
		if err != nil {
			t.Fatal(err)
		}
		err = v.VerifyHeader(c.msg.Header, c.msg.Body)
		if c.accept != (err == nil) || (!c.accept && !errors.Is(err, webhook.ErrNoMatchingSignature)) {
			t.Errorf("%s: webhook.Verifier %v, want accepted=%t", c.name, err, c.accept)
		}
		if node := testenv.NodeVerifyV1a(t, []string{c.key}, time.Now(), webhook.DefaultTolerance, c.msg)[0]; c.accept != (node == nil) {
			t.Errorf("%s: the Node verifier %v, want accepted=%t", c.name, node, c.accept)
		}
	}
}
