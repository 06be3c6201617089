package webhook_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/webhook"
)

// The tests sign as each provider documents it, with crypto/hmac directly, so a mistake shared
// by the package's signing and verifying code cannot hide.
func hmacHex(key, content string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(content))
	return hex.EncodeToString(m.Sum(nil))
}

func hmacBase64(key, content string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(content))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func header(pairs ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(pairs); i += 2 {
		h.Set(pairs[i], pairs[i+1])
	}
	return h
}

// verifyErrors are the kinds every failure must match.
var verifyErrors = []error{webhook.ErrMissingHeader, webhook.ErrMalformedHeader, webhook.ErrInvalidTimestamp, webhook.ErrNoMatchingSignature}

// providerCase is one request and what the verifier must say about it.
type providerCase struct {
	name string
	h    http.Header
	body string
	want error           // nil: accepted
	msg  webhook.Message // checked when accepted
}

func runProviderCases(t *testing.T, v webhook.RequestVerifier, cases []providerCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := v.VerifyRequest(tt.h, []byte(tt.body))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("VerifyRequest: %v, want success", err)
				}
				if msg != tt.msg {
					t.Fatalf("message %+v, want %+v", msg, tt.msg)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyRequest error = %v, want %v", err, tt.want)
			}
			matched := false
			for _, kind := range verifyErrors {
				matched = matched || errors.Is(err, kind)
			}
			if !matched {
				t.Fatalf("error %v is none of the verification errors", err)
			}
			if msg != (webhook.Message{}) {
				t.Fatalf("a refused request returned message %+v", msg)
			}
		})
	}
}

// GitHub's documentation publishes this vector for X-Hub-Signature-256.
const (
	githubDocSecret    = "It's a Secret to Everybody"
	githubDocBody      = "Hello, World!"
	githubDocSignature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func TestGitHubVerifier(t *testing.T) {
	t.Parallel()
	const delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	newSecret := "a new secret during the change"
	v, err := webhook.NewGitHubVerifier([]string{newSecret, githubDocSecret})
	if err != nil {
		t.Fatal(err)
	}
	signed := func(sig string) http.Header {
		return header(webhook.HeaderGitHubSignature, sig, webhook.HeaderGitHubDelivery, delivery, webhook.HeaderGitHubEvent, "push")
	}
	push := webhook.Message{ID: delivery, Type: "push"}
	runProviderCases(t, v, []providerCase{
		{"documented vector", signed(githubDocSignature), githubDocBody, nil, push},
		{"signed with the new secret", signed("sha256=" + hmacHex(newSecret, githubDocBody)), githubDocBody, nil, push},
		{"uppercase prefix", signed(strings.ToUpper(githubDocSignature[:7]) + strings.ToUpper(githubDocSignature[7:])), githubDocBody, webhook.ErrMalformedHeader, push},
		{"tampered body", signed(githubDocSignature), "Hello, World?", webhook.ErrNoMatchingSignature, push},
		{"body with a trailing newline", signed(githubDocSignature), githubDocBody + "\n", webhook.ErrNoMatchingSignature, push},
		{"wrong secret", signed("sha256=" + hmacHex("not the secret", githubDocBody)), githubDocBody, webhook.ErrNoMatchingSignature, push},
		{"sha1 header value", signed("sha1=" + githubDocSignature[7:]), githubDocBody, webhook.ErrMalformedHeader, push},
		{"not hex", signed("sha256=zz"), githubDocBody, webhook.ErrMalformedHeader, push},
		{"empty digest", signed("sha256="), githubDocBody, webhook.ErrNoMatchingSignature, push},
		{"missing signature", header(webhook.HeaderGitHubDelivery, delivery), githubDocBody, webhook.ErrMissingHeader, push},
		{"no delivery id still verifies", header(webhook.HeaderGitHubSignature, githubDocSignature), githubDocBody, nil, webhook.Message{}},
	})
}

func TestShopifyVerifier(t *testing.T) {
	t.Parallel()
	const (
		secret = "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"
		body   = `{"id":820982911946154508,"email":"jon@example.com","total_price":"199.00"}`
		id     = "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"
	)
	v, err := webhook.NewShopifyVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	signed := func(sig string) http.Header {
		return header(webhook.HeaderShopifyHmac, sig, webhook.HeaderShopifyWebhookID, id, webhook.HeaderShopifyTopic, "orders/create")
	}
	good := hmacBase64(secret, body)
	order := webhook.Message{ID: id, Type: "orders/create"}
	runProviderCases(t, v, []providerCase{
		{"valid", signed(good), body, nil, order},
		{"tampered body", signed(good), strings.Replace(body, "199.00", "1.00", 1), webhook.ErrNoMatchingSignature, order},
		{"wrong secret", signed(hmacBase64("shpss_other", body)), body, webhook.ErrNoMatchingSignature, order},
		{"hex instead of base64 (decodes, matches nothing)", signed(hmacHex(secret, body)), body, webhook.ErrNoMatchingSignature, order},
		{"URL-safe base64", signed(strings.NewReplacer("+", "-", "/", "_").Replace(good) + "!"), body, webhook.ErrMalformedHeader, order},
		{"missing header", header(webhook.HeaderShopifyWebhookID, id), body, webhook.ErrMissingHeader, order},
	})
}

// Slack's documentation works through this slash-command request.
const (
	slackDocSecret    = "8f742231b10e8888abcd99yyyzzz85a5"
	slackDocTimestamp = "1531420618"
	slackDocSignature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	slackDocBody      = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)

func TestSlackVerifier(t *testing.T) {
	t.Parallel()
	docTime := time.Unix(1531420618, 0)
	v, err := webhook.NewSlackVerifier([]string{slackDocSecret}, webhook.WithClock(func() time.Time { return docTime.Add(time.Minute) }))
	if err != nil {
		t.Fatal(err)
	}
	signed := func(ts, sig string) http.Header {
		return header(webhook.HeaderSlackTimestamp, ts, webhook.HeaderSlackSignature, sig)
	}
	sign := func(secret, ts, body string) string { return "v0=" + hmacHex(secret, "v0:"+ts+":"+body) }
	stale := strconv.FormatInt(docTime.Add(-5*time.Minute).Unix(), 10) // 6 minutes before the clock
	future := strconv.FormatInt(docTime.Add(7*time.Minute).Unix(), 10) // 6 minutes after it
	edge := strconv.FormatInt(docTime.Add(-4*time.Minute).Unix(), 10)  // exactly the tolerance
	const event = `{"token":"XXYYZZ","team_id":"T123ABC456","type":"event_callback","event_id":"Ev08MFMKH6","event_time":1531420618,` +
		`"event":{"type":"app_mention","user":"U123ABC456","text":"hi"}}`
	runProviderCases(t, v, []providerCase{
		{"documented vector", signed(slackDocTimestamp, slackDocSignature), slackDocBody, nil, webhook.Message{Timestamp: docTime}},
		{"event callback", signed(slackDocTimestamp, sign(slackDocSecret, slackDocTimestamp, event)), event, nil,
			webhook.Message{ID: "Ev08MFMKH6", Type: "app_mention", Timestamp: docTime}},
		{"at the tolerance", signed(edge, sign(slackDocSecret, edge, event)), event, nil,
			webhook.Message{ID: "Ev08MFMKH6", Type: "app_mention", Timestamp: time.Unix(docTime.Unix()-240, 0)}},
		{"tampered body", signed(slackDocTimestamp, slackDocSignature), strings.Replace(slackDocBody, "foobar", "general", 1), webhook.ErrNoMatchingSignature, webhook.Message{}},
		{"wrong secret", signed(slackDocTimestamp, sign("another secret", slackDocTimestamp, slackDocBody)), slackDocBody, webhook.ErrNoMatchingSignature, webhook.Message{}},
		{"timestamp swapped after signing", signed(edge, slackDocSignature), slackDocBody, webhook.ErrNoMatchingSignature, webhook.Message{}},
		{"stale, correctly signed", signed(stale, sign(slackDocSecret, stale, slackDocBody)), slackDocBody, webhook.ErrTimestampTooOld, webhook.Message{}},
		{"future, correctly signed", signed(future, sign(slackDocSecret, future, slackDocBody)), slackDocBody, webhook.ErrTimestampTooNew, webhook.Message{}},
		{"timestamp not digits", signed("1531420618.5", slackDocSignature), slackDocBody, webhook.ErrInvalidTimestamp, webhook.Message{}},
		{"no v0= prefix", signed(slackDocTimestamp, slackDocSignature[3:]), slackDocBody, webhook.ErrMalformedHeader, webhook.Message{}},
		{"not hex", signed(slackDocTimestamp, "v0=xyz"), slackDocBody, webhook.ErrMalformedHeader, webhook.Message{}},
		{"missing timestamp", header(webhook.HeaderSlackSignature, slackDocSignature), slackDocBody, webhook.ErrMissingHeader, webhook.Message{}},
		{"missing signature", header(webhook.HeaderSlackTimestamp, slackDocTimestamp), slackDocBody, webhook.ErrMissingHeader, webhook.Message{}},
	})
}

func TestStripeVerifier(t *testing.T) {
	t.Parallel()
	const (
		secret    = "whsec_test_7e8b0c2f4d6a"
		rolled    = "whsec_test_previous_3c1d"
		eventBody = `{"id":"evt_1QzX2bLkdIwHu7ix","object":"event","type":"invoice.paid","created":1735689600,"data":{"object":{"id":"in_1Qz"}}}`
	)
	now := time.Unix(1735689600, 0)
	v, err := webhook.NewStripeVerifier([]string{secret, rolled}, webhook.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	v1 := func(key, ts, body string) string { return "v1=" + hmacHex(key, ts+"."+body) }
	sig := func(parts ...string) http.Header {
		return header(webhook.HeaderStripeSignature, strings.Join(parts, ","))
	}
	t0 := at(0)
	paid := webhook.Message{ID: "evt_1QzX2bLkdIwHu7ix", Type: "invoice.paid", Timestamp: now}
	runProviderCases(t, v, []providerCase{
		{"valid", sig("t="+t0, v1(secret, t0, eventBody)), eventBody, nil, paid},
		{"v0 and an unknown scheme beside v1", sig("t="+t0, "v0="+hmacHex(secret, "x"), v1(secret, t0, eventBody), "v2=ab"), eventBody, nil, paid},
		{"two v1 during a roll, the second matches", sig("t="+t0, v1("whsec_unknown", t0, eventBody), v1(rolled, t0, eventBody)), eventBody, nil, paid},
		{"spaces after commas", sig("t="+t0, " "+v1(secret, t0, eventBody)), eventBody, nil, paid},
		{"tampered body", sig("t="+t0, v1(secret, t0, eventBody)), strings.Replace(eventBody, "in_1Qz", "in_2Qz", 1), webhook.ErrNoMatchingSignature, paid},
		{"wrong secret", sig("t="+t0, v1("whsec_wrong", t0, eventBody)), eventBody, webhook.ErrNoMatchingSignature, paid},
		{"secret base64-decoded as Standard Webhooks would", sig("t="+t0, "v1="+hmacHex("\xc2\x1d\xeb", t0+"."+eventBody)), eventBody, webhook.ErrNoMatchingSignature, paid},
		{"t changed after signing", sig("t="+at(time.Second), v1(secret, t0, eventBody)), eventBody, webhook.ErrNoMatchingSignature, paid},
		{"only v0", sig("t="+t0, "v0="+hmacHex(secret, t0+"."+eventBody)), eventBody, webhook.ErrNoMatchingSignature, paid},
		{"stale, correctly signed", sig("t="+at(-6*time.Minute), v1(secret, at(-6*time.Minute), eventBody)), eventBody, webhook.ErrTimestampTooOld, paid},
		{"future, correctly signed", sig("t="+at(6*time.Minute), v1(secret, at(6*time.Minute), eventBody)), eventBody, webhook.ErrTimestampTooNew, paid},
		{"no t", sig(v1(secret, t0, eventBody)), eventBody, webhook.ErrMalformedHeader, paid},
		{"two t", sig("t="+t0, "t="+t0, v1(secret, t0, eventBody)), eventBody, webhook.ErrMalformedHeader, paid},
		{"entry without =", sig("t="+t0, "garbage"), eventBody, webhook.ErrMalformedHeader, paid},
		{"negative t", sig("t=-1", v1(secret, "-1", eventBody)), eventBody, webhook.ErrInvalidTimestamp, paid},
		{"missing header", header("Content-Type", "application/json"), eventBody, webhook.ErrMissingHeader, paid},
	})
}

func TestProviderVerifiersRefuseBadSecrets(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func([]string) error{
		"github":  func(s []string) error { _, err := webhook.NewGitHubVerifier(s); return err },
		"shopify": func(s []string) error { _, err := webhook.NewShopifyVerifier(s); return err },
		"stripe":  func(s []string) error { _, err := webhook.NewStripeVerifier(s); return err },
		"slack":   func(s []string) error { _, err := webhook.NewSlackVerifier(s); return err },
		"twilio":  func(s []string) error { _, err := webhook.NewTwilioVerifier(s, "https://x.example/"); return err },
	} {
		for _, secrets := range [][]string{nil, {""}, {"ok", ""}} {
			if err := build(secrets); !errors.Is(err, webhook.ErrInvalidSecret) {
				t.Errorf("%s with secrets %q: error %v, want ErrInvalidSecret", name, secrets, err)
			}
		}
	}
	if _, err := webhook.NewStripeVerifier([]string{"whsec_x"}, webhook.WithTolerance(0)); err == nil {
		t.Error("Stripe verifier accepted a zero tolerance")
	}
	if _, err := webhook.NewSlackVerifier([]string{"x"}, webhook.WithClock(nil)); err == nil {
		t.Error("Slack verifier accepted a nil clock")
	}
}

// The Standard Webhooks Verifier names the message by webhook-id and, when the payload says,
// its type.
func TestVerifierVerifyRequest(t *testing.T) {
	t.Parallel()
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	)
	at := time.Unix(1614265330, 0)
	v, err := webhook.NewVerifier([]string{secret}, webhook.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := webhook.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ body, wantType string }{
		{`{"type":"contact.created","timestamp":"2021-02-25T15:02:10Z","data":{}}`, "contact.created"},
		{`{"test": 2432232314}`, ""},
		{`not json`, ""},
	} {
		h := http.Header{}
		signer.SetHeaders(h, id, at, []byte(tt.body))
		msg, err := v.VerifyRequest(h, []byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if want := (webhook.Message{ID: id, Type: tt.wantType, Timestamp: at}); msg != want {
			t.Fatalf("%s: message %+v, want %+v", tt.body, msg, want)
		}
		if _, err := v.VerifyRequest(h, []byte(tt.body+" ")); !errors.Is(err, webhook.ErrNoMatchingSignature) {
			t.Fatalf("%s tampered: error %v", tt.body, err)
		}
	}
}

// Twilio's documentation works through this voice request.
const (
	twilioDocToken     = "12345"
	twilioDocURL       = "https://mycompany.com/myapp.php?foo=1&bar=2"
	twilioDocSignature = "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
	// The documented parameters, form-encoded as Twilio posts them, in another order than sorted.
	twilioDocBody = "To=%2B18005551212&CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030"
)

func hmacSHA1Base64(key, content string) string {
	m := hmac.New(sha1.New, []byte(key))
	m.Write([]byte(content))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestTwilioVerifier(t *testing.T) {
	t.Parallel()
	const (
		token   = "f4b2c1d0e9a8b7c6d5e4f3a2b1c0d9e8"
		hookURL = "https://hooks.example.com/twilio/events"
		idem    = "e8b6a2f0-5c1d-4b7e-9a3f-1d2c3b4a5e6f"
		event   = `[{"specversion":"1.0","type":"com.twilio.messaging.message.delivered","id":"EZ01"}]`
	)
	form := "application/x-www-form-urlencoded"
	signed := func(sig, contentType string) http.Header {
		return header(webhook.HeaderTwilioSignature, sig, "Content-Type", contentType, webhook.HeaderTwilioIdempotencyToken, idem)
	}
	call := webhook.Message{ID: idem}
	doc, err := webhook.NewTwilioVerifier([]string{"the secondary token", twilioDocToken}, twilioDocURL)
	if err != nil {
		t.Fatal(err)
	}
	runProviderCases(t, doc, []providerCase{
		{"documented vector", signed(twilioDocSignature, form), twilioDocBody, nil, call},
		{"documented vector, charset in the content type", signed(twilioDocSignature, form+"; charset=utf-8"), twilioDocBody, nil, call},
		{"tampered parameter", signed(twilioDocSignature, form), strings.Replace(twilioDocBody, "Digits=1234", "Digits=1235", 1), webhook.ErrNoMatchingSignature, call},
		{"added parameter", signed(twilioDocSignature, form), twilioDocBody + "&Extra=1", webhook.ErrNoMatchingSignature, call},
		{"tampered signature", signed("1"+twilioDocSignature[1:], form), twilioDocBody, webhook.ErrNoMatchingSignature, call},
		{"parameters not form-encoded (signed as a body hash)", signed(twilioDocSignature, "text/plain"), twilioDocBody, webhook.ErrNoMatchingSignature, call},
		{"form body that does not parse", signed(twilioDocSignature, form), "a=%zz", webhook.ErrNoMatchingSignature, call},
		{"URL-safe base64", signed(strings.ReplaceAll(twilioDocSignature, "/", "_"), form), twilioDocBody, webhook.ErrMalformedHeader, call},
		{"missing signature", header("Content-Type", form), twilioDocBody, webhook.ErrMissingHeader, call},
	})

	// Another URL than Twilio signed: the path, the query or the scheme changed.
	for _, other := range []string{"https://mycompany.com/myapp.php?foo=1&bar=3", "https://mycompany.com/myapp.php", "http://mycompany.com/myapp.php?foo=1&bar=2", "https://mycompany.com/other.php?foo=1&bar=2"} {
		v, err := webhook.NewTwilioVerifier([]string{twilioDocToken}, other)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.VerifyRequest(signed(twilioDocSignature, form), []byte(twilioDocBody)); !errors.Is(err, webhook.ErrNoMatchingSignature) {
			t.Errorf("URL %s: error %v, want ErrNoMatchingSignature", other, err)
		}
	}

	// A JSON body: the signature covers the URL with bodySHA256, the hex SHA-256 of the body.
	v, err := webhook.NewTwilioVerifier([]string{token}, hookURL)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(event))
	jsonSig := hmacSHA1Base64(token, hookURL+"?bodySHA256="+hex.EncodeToString(sum[:]))
	withQuery, err := webhook.NewTwilioVerifier([]string{token}, hookURL+"?site=eu")
	if err != nil {
		t.Fatal(err)
	}
	queried := hmacSHA1Base64(token, hookURL+"?site=eu&bodySHA256="+hex.EncodeToString(sum[:]))
	runProviderCases(t, v, []providerCase{
		{"JSON body", signed(jsonSig, "application/json"), event, nil, call},
		{"JSON body tampered", signed(jsonSig, "application/json"), strings.Replace(event, "EZ01", "EZ02", 1), webhook.ErrNoMatchingSignature, call},
		{"URL alone signed for a body", signed(hmacSHA1Base64(token, hookURL), "application/json"), event, webhook.ErrNoMatchingSignature, call},
		{"empty body signs the URL alone", signed(hmacSHA1Base64(token, hookURL), ""), "", nil, call},
		{"HMAC-SHA256 instead of SHA1", signed(hmacBase64(token, hookURL), ""), "", webhook.ErrNoMatchingSignature, call},
		{"no idempotency token still verifies", header(webhook.HeaderTwilioSignature, jsonSig, "Content-Type", "application/json"), event, nil, webhook.Message{}},
	})
	runProviderCases(t, withQuery, []providerCase{
		{"JSON body, URL with a query", signed(queried, "application/json"), event, nil, call},
	})

	for _, bad := range []string{"", "/twilio", "ftp://x.example/", "https://x.example/#frag", "https://x.example/?bodySHA256=ab", "://"} {
		if _, err := webhook.NewTwilioVerifier([]string{token}, bad); err == nil {
			t.Errorf("NewTwilioVerifier accepted the URL %q", bad)
		}
	}
}
