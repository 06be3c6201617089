package webhook_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// keyPair is a v1a key pair of a test.
type keyPair struct{ signing, public string }

func newKeyPair(t *testing.T) keyPair {
	t.Helper()
	sk, pk, err := webhook.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{sk, pk}
}

// signedMessage signs body as msg id at the given time with the given keys, as the sender does.
func signedMessage(t *testing.T, id string, at time.Time, body string, keys ...string) testenv.SignedMessage {
	t.Helper()
	s, err := webhook.NewSigner(keys...)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	s.SetHeaders(h, id, at, []byte(body))
	return testenv.SignedMessage{Header: h, Body: []byte(body)}
}

// R15: v1a messages are accepted by webhook.Verifier and by an independent verifier written in
// JavaScript from the specification, given only the public key; a tampered body, another key
// and a stale timestamp are refused by both.
func TestV1aVerifiesWithTheIndependentVerifier(t *testing.T) {
	mine, other := newKeyPair(t), newKeyPair(t)
	now := time.Now()
	const body = `{"type":"customer.created",  "data":{"id":"cus_1"}}`
	good := signedMessage(t, "evt_1", now, body, mine.signing)
	tampered := good
	tampered.Body = []byte(strings.Replace(body, "cus_1", "cus_2", 1))
	byOther := signedMessage(t, "evt_1", now, body, other.signing)
	stale := signedMessage(t, "evt_1", now.Add(-10*time.Minute), body, mine.signing)
	idSwapped := signedMessage(t, "evt_1", now, body, mine.signing)
	idSwapped.Header.Set(webhook.HeaderID, "evt_2")

	sig := good.Header.Get(webhook.HeaderSignature)
	if !strings.HasPrefix(sig, "v1a,") || len(strings.Fields(sig)) != 1 {
		t.Fatalf("webhook-signature %q: want one v1a entry", sig)
	}
	cases := []struct {
		name string
		msg  testenv.SignedMessage
		want error // of webhook.Verifier; nil: accepted
	}{
		{"signed", good, nil},
		{"tampered body", tampered, webhook.ErrNoMatchingSignature},
		{"another endpoint's key", byOther, webhook.ErrNoMatchingSignature},
		{"stale timestamp", stale, webhook.ErrTimestampTooOld},
		{"another message id", idSwapped, webhook.ErrNoMatchingSignature},
	}
	msgs := make([]testenv.SignedMessage, len(cases))
	for i, c := range cases {
		msgs[i] = c.msg
	}
	node := testenv.NodeVerifyV1a(t, []string{mine.public}, now, webhook.DefaultTolerance, msgs...)
	v, err := webhook.NewVerifier([]string{mine.public})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		err := v.VerifyHeader(c.msg.Header, c.msg.Body)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: webhook.Verifier: %v, want %v", c.name, err, c.want)
		}
		if (c.want == nil) != (node[i] == nil) {
			t.Errorf("%s: the Node verifier: %v, want accepted=%t", c.name, node[i], c.want == nil)
		}
	}
}

// R17: during a rotation the header carries one v1a signature per active key and either public
// key alone verifies; after it only the new key signs and the old public key is refused.
func TestV1aRotation(t *testing.T) {
	old, fresh := newKeyPair(t), newKeyPair(t)
	now := time.Now()
	const body = `{"type":"balance.low"}`
	during := signedMessage(t, "evt_r", now, body, fresh.signing, old.signing)
	after := signedMessage(t, "evt_r", now, body, fresh.signing)
	if n := len(strings.Fields(during.Header.Get(webhook.HeaderSignature))); n != 2 {
		t.Fatalf("during the overlap %d signatures, want 2", n)
	}
	for _, tc := range []struct {
		name   string
		msg    testenv.SignedMessage
		key    string
		accept bool
	}{
		{"overlap, old key", during, old.public, true},
		{"overlap, new key", during, fresh.public, true},
		{"after, new key", after, fresh.public, true},
		{"after, old key", after, old.public, false},
	} {
		v, err := webhook.NewVerifier([]string{tc.key})
		if err != nil {
			t.Fatal(err)
		}
		err = v.VerifyHeader(tc.msg.Header, tc.msg.Body)
		node := testenv.NodeVerifyV1a(t, []string{tc.key}, now, webhook.DefaultTolerance, tc.msg)[0]
		if tc.accept != (err == nil) || tc.accept != (node == nil) {
			t.Errorf("%s: webhook.Verifier %v, Node %v; want accepted=%t", tc.name, err, node, tc.accept)
		}
	}
}

// A rotation between schemes signs with both: an HMAC secret and a signing key give a v1 and a
// v1a entry, each verifier accepts by its own key, and one holding neither refuses.
func TestMixedSchemesDuringARotation(t *testing.T) {
	pair := newKeyPair(t)
	secret, _ := webhook.NewSecret()
	stranger, _ := webhook.NewSecret()
	msg := signedMessage(t, "evt_m", time.Now(), `{}`, pair.signing, secret)
	entries := strings.Fields(msg.Header.Get(webhook.HeaderSignature))
	if len(entries) != 2 || !strings.HasPrefix(entries[0], "v1a,") || !strings.HasPrefix(entries[1], "v1,") {
		t.Fatalf("signature entries %q, want v1a then v1", entries)
	}
	for _, keys := range [][]string{{pair.public}, {secret}, {stranger, pair.public}} {
		v, err := webhook.NewVerifier(keys)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.VerifyHeader(msg.Header, msg.Body); err != nil {
			t.Errorf("keys %v: %v", keys, err)
		}
	}
	v, _ := webhook.NewVerifier([]string{stranger})
	if err := v.VerifyHeader(msg.Header, msg.Body); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("a stranger's secret: %v", err)
	}
}

// Keys are told apart by prefix; a receiver is never given what signs, a signer never what only
// verifies, and no error repeats a key.
func TestAsymmetricKeys(t *testing.T) {
	pair := newKeyPair(t)
	if pub, err := webhook.PublicKeyOf(pair.signing); err != nil || pub != pair.public {
		t.Fatalf("PublicKeyOf = %q, %v; want %q", pub, err, pair.public)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(pair.signing, webhook.SigningKeyPrefix))
	seedOnly := webhook.SigningKeyPrefix + base64.StdEncoding.EncodeToString(raw[:ed25519.SeedSize])
	if pub, err := webhook.PublicKeyOf(seedOnly); err != nil || pub != pair.public {
		t.Fatalf("the seed alone: %q, %v", pub, err)
	}
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	mismatched := webhook.SigningKeyPrefix + base64.StdEncoding.EncodeToString(append(raw[:32:32], otherPriv[32:]...))

	for _, bad := range []struct {
		name string
		do   func() error
	}{
		{"a verifier given a signing key", func() error { _, err := webhook.NewVerifier([]string{pair.signing}); return err }},
		{"a signer given a public key", func() error { _, err := webhook.NewSigner(pair.public); return err }},
		{"a signing key whose halves differ", func() error { _, err := webhook.NewSigner(mismatched); return err }},
		{"a short public key", func() error { _, err := webhook.NewVerifier([]string{"whpk_AAAA"}); return err }},
		{"a public key not base64", func() error { _, err := webhook.ParsePublicKey("whpk_!!!!"); return err }},
		{"a public key without its prefix", func() error {
			_, err := webhook.ParsePublicKey(strings.TrimPrefix(pair.public, webhook.PublicKeyPrefix))
			return err
		}},
		{"a signing key of 48 bytes", func() error { _, err := webhook.NewSigner("whsk_" + strings.Repeat("A", 64)); return err }},
	} {
		err := bad.do()
		if !errors.Is(err, webhook.ErrInvalidSecret) {
			t.Errorf("%s: %v, want ErrInvalidSecret", bad.name, err)
			continue
		}
		for _, key := range []string{pair.signing, pair.public, mismatched} {
			if strings.Contains(err.Error(), strings.TrimPrefix(strings.TrimPrefix(key, "whsk_"), "whpk_")) {
				t.Errorf("%s: the error repeats a key: %v", bad.name, err)
			}
		}
	}
}

// A header stuffed with v1a entries is refused before any ed25519 work; a v1-only verifier
// ignores v1a entries, as the reference libraries ignore versions they do not know.
func TestV1aHeaderLimits(t *testing.T) {
	pair := newKeyPair(t)
	msg := signedMessage(t, "evt_l", time.Now(), `{}`, pair.signing)
	entry := msg.Header.Get(webhook.HeaderSignature)
	v, _ := webhook.NewVerifier([]string{pair.public})
	stuffed := strings.TrimSpace(strings.Repeat(entry+" ", 17))
	if err := v.Verify("evt_l", msg.Header.Get(webhook.HeaderTimestamp), stuffed, msg.Body); !errors.Is(err, webhook.ErrMalformedHeader) {
		t.Fatalf("17 v1a entries: %v, want ErrMalformedHeader", err)
	}
	if err := v.Verify("evt_l", msg.Header.Get(webhook.HeaderTimestamp), strings.TrimSpace(strings.Repeat(entry+" ", 16)), msg.Body); err != nil {
		t.Fatalf("16 v1a entries: %v", err)
	}
	secret, _ := webhook.NewSecret()
	v1only, _ := webhook.NewVerifier([]string{secret})
	if err := v1only.VerifyHeader(msg.Header, msg.Body); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Fatalf("a v1 verifier on a v1a message: %v", err)
	}
}
