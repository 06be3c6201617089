package webhook

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// verifyErrors are the only errors Verify may return; anything else is a bug.
var verifyErrors = []error{ErrMissingHeader, ErrMalformedHeader, ErrInvalidTimestamp, ErrNoMatchingSignature}

func FuzzParseSignatureHeader(f *testing.F) {
	for _, seed := range []string{
		vectorSignature, "", " ", "garbage", "v1,", ",", "v1a,abc " + vectorSignature,
		"v1,!!!! v1,====", "v1,a,b,c", "\tv1,AAAA\n", strings.Repeat("v1,AAAA ", 50),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		sigs, err := parseSignatureHeader(header)
		hasEntry, v1Entries, v1aEntries := false, 0, 0
		for _, field := range strings.Fields(header) {
			hasEntry = hasEntry || strings.Contains(field, ",")
			if strings.HasPrefix(field, "v1,") {
				v1Entries++
			}
			if strings.HasPrefix(field, "v1a,") {
				v1aEntries++
			}
		}
		if wantOK := hasEntry && v1aEntries <= maxAsymmetricEntries; wantOK != (err == nil) {
			t.Fatalf("parseSignatureHeader(%q) error = %v, but header has an entry: %v", header, err, hasEntry)
		}
		if err != nil && !errors.Is(err, ErrMalformedHeader) {
			t.Fatalf("error %v is not ErrMalformedHeader", err)
		}
		if len(sigs.v1) > v1Entries || len(sigs.v1a) > v1aEntries {
			t.Fatalf("%d v1 and %d v1a signatures from a header with %d v1 and %d v1a entries", len(sigs.v1), len(sigs.v1a), v1Entries, v1aEntries)
		}
		for _, sig := range sigs.v1a {
			if len(sig) != ed25519.SignatureSize {
				t.Fatalf("a v1a signature of %d bytes", len(sig))
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Add(vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody))
	f.Add(vectorID, vectorTimestamp, "v1a,xyz "+vectorSignature, []byte(vectorBody))
	f.Add(vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody+" "))
	f.Add("", "", "", []byte(nil))
	f.Add("msg", "1614265331", "v1,garbage", []byte("{}"))
	f.Add("msg", "-1", "v2,AAAA", []byte("{}"))
	f.Add("msg", "99999999999999999999", ",", []byte("{}"))
	v, err := NewVerifier([]string{vectorSecret}, WithClock(fixedClock(vectorTime)))
	if err != nil {
		f.Fatalf("NewVerifier: %v", err)
	}
	key, err := ParseSecret(vectorSecret)
	if err != nil {
		f.Fatalf("ParseSecret: %v", err)
	}
	f.Fuzz(func(t *testing.T, id, ts, signature string, body []byte) {
		err := v.Verify(id, ts, signature, body)
		if err != nil {
			if !isOneOf(err, verifyErrors) {
				t.Fatalf("Verify returned an untyped error: %v", err)
			}
			return
		}
		// Accepted: a v1 entry must carry the HMAC of exactly these bytes.
		sigs, perr := parseSignatureHeader(signature)
		if perr != nil {
			t.Fatalf("accepted a header the parser rejects: %v", perr)
		}
		want := mac(key, id, ts, body)
		for _, sig := range sigs.v1 {
			if hmac.Equal(sig, want) {
				return
			}
		}
		t.Fatalf("accepted id=%q ts=%q signature=%q without a matching HMAC", id, ts, signature)
	})
}

func FuzzParseSecret(f *testing.F) {
	for _, seed := range []string{vectorSecret, secondSecret, "", SecretPrefix, "whsec_!!", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, secret string) {
		key, err := ParseSecret(secret)
		if err != nil {
			if !errors.Is(err, ErrInvalidSecret) {
				t.Fatalf("ParseSecret error %v is not ErrInvalidSecret", err)
			}
			return
		}
		if len(key) < minKeyBytes || len(key) > maxKeyBytes {
			t.Fatalf("accepted a %d byte key", len(key))
		}
		// Any accepted secret must sign and verify its own messages.
		sig, err := Sign(secret, "msg_1", vectorTime, []byte("{}"))
		if err != nil {
			t.Fatalf("Sign with accepted secret: %v", err)
		}
		v, err := NewVerifier([]string{secret}, WithClock(fixedClock(vectorTime)))
		if err != nil {
			t.Fatalf("NewVerifier with accepted secret: %v", err)
		}
		if err := v.Verify("msg_1", vectorTimestamp, sig, []byte("{}")); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzSignVerify checks that whatever a Signer produces, a Verifier with the same secrets and
// clock accepts, and that flipping any body byte is refused.
func FuzzSignVerify(f *testing.F) {
	f.Add(vectorID, int64(1614265330), []byte(vectorBody))
	f.Add("evt_01J0000000000000000000000", int64(0), []byte(nil))
	f.Add("id with spaces. and dots", int64(1<<40), []byte{0, 0xff, '.'})
	signer, err := NewSigner(secondSecret, vectorSecret)
	if err != nil {
		f.Fatalf("NewSigner: %v", err)
	}
	f.Fuzz(func(t *testing.T, id string, unix int64, body []byte) {
		if strings.TrimSpace(id) == "" || unix < 0 {
			return // outside the domain: Standard Webhooks has no empty ids or pre-1970 timestamps
		}
		ts := time.Unix(unix, 0)
		sig := signer.Sign(id, ts, body)
		v, err := NewVerifier([]string{vectorSecret}, WithClock(fixedClock(ts)))
		if err != nil {
			t.Fatalf("NewVerifier: %v", err)
		}
		tsHeader := formatTimestamp(ts)
		if err := v.Verify(id, tsHeader, sig, body); err != nil {
			t.Fatalf("Verify(Sign(...)): %v", err)
		}
		if len(body) == 0 {
			return
		}
		tampered := bytes.Clone(body)
		tampered[len(tampered)/2] ^= 1
		if err := v.Verify(id, tsHeader, sig, tampered); !errors.Is(err, ErrNoMatchingSignature) {
			t.Fatalf("tampered body: error = %v, want ErrNoMatchingSignature", err)
		}
	})
}

func hmacSHA1(key []byte, content string) []byte {
	m := hmac.New(sha1.New, key)
	m.Write([]byte(content))
	return m.Sum(nil)
}

func isOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// FuzzProviderVerifiers sends arbitrary header values and bodies to every provider's verifier:
// a refusal is always one of the typed errors and never a panic, and an acceptance always
// comes with the HMAC of exactly these bytes under the secret.
func FuzzProviderVerifiers(f *testing.F) {
	const secret = "fuzz secret"
	now := time.Unix(1735689600, 0)
	clock := WithClock(fixedClock(now))
	github, _ := NewGitHubVerifier([]string{secret})
	shopify, _ := NewShopifyVerifier([]string{secret})
	stripe, err := NewStripeVerifier([]string{secret}, clock)
	if err != nil {
		f.Fatal(err)
	}
	slack, err := NewSlackVerifier([]string{secret}, clock)
	if err != nil {
		f.Fatal(err)
	}
	const twilioURL = "https://x.example/hook?a=1"
	twilio, err := NewTwilioVerifier([]string{secret}, twilioURL)
	if err != nil {
		f.Fatal(err)
	}
	body := `{"id":"evt_1","type":"x"}`
	f.Add("sha256="+hex.EncodeToString(hmacSHA256([]byte(secret), []byte(body))), "1735689600", body)
	f.Add("t=1735689600,v1="+hex.EncodeToString(hmacSHA256([]byte(secret), []byte("1735689600."+body))), "", body)
	f.Add("v0="+hex.EncodeToString(hmacSHA256([]byte(secret), []byte("v0:1735689600:"+body))), "1735689600", body)
	f.Add(base64.StdEncoding.EncodeToString(hmacSHA256([]byte(secret), []byte(body))), "", body)
	f.Add("t=,v1=,,==", "-5", "")
	f.Add("sha256=zz", "99999999999999999999", "\xff")
	f.Add("sha256="+strings.ToUpper(hex.EncodeToString(hmacSHA256([]byte(secret), []byte(body)))), "", body)
	bodySum := sha256.Sum256([]byte(body))
	f.Add(base64.StdEncoding.EncodeToString(hmacSHA1([]byte(secret), twilioURL+"&bodySHA256="+hex.EncodeToString(bodySum[:]))), "", body)
	f.Fuzz(func(t *testing.T, sig, ts, body string) {
		h := http.Header{}
		for _, name := range []string{HeaderGitHubSignature, HeaderShopifyHmac, HeaderStripeSignature, HeaderSlackSignature, HeaderTwilioSignature} {
			h.Set(name, sig)
		}
		h.Set(HeaderSlackTimestamp, ts)
		h.Set("Content-Type", "application/json")
		for name, v := range map[string]RequestVerifier{"github": github, "shopify": shopify, "stripe": stripe, "slack": slack, "twilio": twilio} {
			_, err := v.VerifyRequest(h, []byte(body))
			if err != nil {
				if !isOneOf(err, verifyErrors) {
					t.Fatalf("%s: untyped error %v", name, err)
				}
				continue
			}
			var signed string
			switch name {
			case "github":
				signed = body
			case "shopify":
				signed = body
			case "stripe":
				tPart, _, _ := parseStripeSignature(sig)
				signed = tPart + "." + body
			case "slack":
				signed = "v0:" + ts + ":" + body
			case "twilio":
				// Twilio's HMAC is SHA-1 over the URL and the body's hash, so it is checked apart.
				want := twilioURL
				if body != "" {
					sum := sha256.Sum256([]byte(body))
					want += "&bodySHA256=" + hex.EncodeToString(sum[:])
				}
				if sig != base64.StdEncoding.EncodeToString(hmacSHA1([]byte(secret), want)) {
					t.Fatalf("twilio accepted %q over %q without its HMAC", sig, body)
				}
				continue
			}
			// Hex is compared without case: "AB" and "ab" are the same bytes of the same HMAC.
			if !strings.Contains(strings.ToLower(sig), hex.EncodeToString(hmacSHA256([]byte(secret), []byte(signed)))) &&
				!strings.Contains(sig, base64.StdEncoding.EncodeToString(hmacSHA256([]byte(secret), []byte(signed)))) {
				t.Fatalf("%s accepted %q over %q without its HMAC", name, sig, body)
			}
		}
	})
}
