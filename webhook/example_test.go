package webhook_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hookstream/hookstream/webhook"
)

func ExampleNewSecret() {
	secret, err := webhook.NewSecret()
	if err != nil {
		panic(err)
	}
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(secret, webhook.SecretPrefix), len(key))
	// Output: true 32
}

// Signing the published Standard Webhooks test vector.
func ExampleSign() {
	sig, err := webhook.Sign(
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`),
	)
	if err != nil {
		panic(err)
	}
	fmt.Println(sig)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}

// A sender keeps one Signer per endpoint. During a secret rotation it holds both secrets and
// every request carries both signatures, so the receiver may switch secrets at any time.
func ExampleSigner_SetHeaders() {
	newSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	oldSecret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	signer, err := webhook.NewSigner(newSecret, oldSecret)
	if err != nil {
		panic(err)
	}
	body := []byte(`{"test": 2432232314}`)
	req, err := http.NewRequest(http.MethodPost, "https://receiver.example/webhooks", nil)
	if err != nil {
		panic(err)
	}
	signer.SetHeaders(req.Header, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), body)
	fmt.Println(req.Header.Get(webhook.HeaderTimestamp))
	for _, sig := range strings.Fields(req.Header.Get(webhook.HeaderSignature)) {
		fmt.Println(sig)
	}
	// Output:
	// 1614265330
	// v1,hK4CWvngkaAwjY1pABLuUbOIkEJjW9tAapq1no4ojG0=
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}

// A receiver verifies the headers over the raw body before parsing it. The clock is fixed here
// so the 2021 test vector is inside the tolerance; real receivers leave the default (time.Now).
func ExampleVerifier_VerifyHeader() {
	verifier, err := webhook.NewVerifier(
		[]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		webhook.WithClock(func() time.Time { return time.Unix(1614265330, 0).Add(time.Minute) }),
	)
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderID, "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set(webhook.HeaderTimestamp, "1614265330")
	h.Set(webhook.HeaderSignature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")

	fmt.Println(verifier.VerifyHeader(h, []byte(`{"test": 2432232314}`)))

	err = verifier.VerifyHeader(h, []byte(`{"test":2432232314}`))
	fmt.Println(errors.Is(err, webhook.ErrNoMatchingSignature))

	h.Set(webhook.HeaderTimestamp, "1614260000")
	err = verifier.VerifyHeader(h, []byte(`{"test": 2432232314}`))
	fmt.Println(errors.Is(err, webhook.ErrTimestampTooOld))
	// Output:
	// <nil>
	// true
	// true
}

// GitHub signs the body alone with X-Hub-Signature-256; this is the vector from GitHub's
// documentation. The delivery GUID names the event for deduplication.
func ExampleGitHubVerifier() {
	verifier, err := webhook.NewGitHubVerifier([]string{"It's a Secret to Everybody"})
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderGitHubSignature, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	h.Set(webhook.HeaderGitHubDelivery, "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	h.Set(webhook.HeaderGitHubEvent, "push")

	msg, err := verifier.VerifyRequest(h, []byte("Hello, World!"))
	fmt.Println(msg.ID, msg.Type, err)

	_, err = verifier.VerifyRequest(h, []byte("Hello, World?"))
	fmt.Println(errors.Is(err, webhook.ErrNoMatchingSignature))
	// Output:
	// 72d3162e-cc78-11e3-81ab-4c9367dc0958 push <nil>
	// true
}

// Stripe signs "t.body" and names the event in the body. The signing secret is the HMAC key
// as shown in the dashboard, "whsec_" and all. The clock is fixed so the example's timestamp
// is within the tolerance.
func ExampleStripeVerifier() {
	const secret = "whsec_test_example"
	body := []byte(`{"id":"evt_1QzX2b","object":"event","type":"invoice.paid"}`)
	signedAt := time.Unix(1735689600, 0)
	verifier, err := webhook.NewStripeVerifier([]string{secret},
		webhook.WithClock(func() time.Time { return signedAt.Add(30 * time.Second) }))
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderStripeSignature, "t=1735689600,v1="+hmacHex(secret, "1735689600."+string(body)))

	msg, err := verifier.VerifyRequest(h, body)
	fmt.Println(msg.ID, msg.Type, msg.Timestamp.UTC().Format(time.RFC3339), err)

	// The same request an hour later is a replay.
	late, _ := webhook.NewStripeVerifier([]string{secret},
		webhook.WithClock(func() time.Time { return signedAt.Add(time.Hour) }))
	_, err = late.VerifyRequest(h, body)
	fmt.Println(errors.Is(err, webhook.ErrTimestampTooOld))
	// Output:
	// evt_1QzX2b invoice.paid 2025-01-01T00:00:00Z <nil>
	// true
}

// Slack signs "v0:timestamp:body"; this is the slash-command request from Slack's
// documentation, which names no event (an Events API callback carries its event_id).
func ExampleSlackVerifier() {
	verifier, err := webhook.NewSlackVerifier([]string{"8f742231b10e8888abcd99yyyzzz85a5"},
		webhook.WithClock(func() time.Time { return time.Unix(1531420618, 0).Add(time.Minute) }))
	if err != nil {
		panic(err)
	}
	body := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	h := http.Header{}
	h.Set(webhook.HeaderSlackTimestamp, "1531420618")
	h.Set(webhook.HeaderSlackSignature, "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503")

	msg, err := verifier.VerifyRequest(h, body)
	fmt.Printf("id %q, err %v\n", msg.ID, err)

	h.Set(webhook.HeaderSlackTimestamp, "1531420619") // the timestamp is signed too
	_, err = verifier.VerifyRequest(h, body)
	fmt.Println(errors.Is(err, webhook.ErrNoMatchingSignature))
	// Output:
	// id "", err <nil>
	// true
}

// Shopify sends the base64 HMAC of the body in X-Shopify-Hmac-Sha256.
func ExampleShopifyVerifier() {
	const secret = "shpss_example_client_secret"
	body := []byte(`{"id":820982911946154508,"total_price":"199.00"}`)
	verifier, err := webhook.NewShopifyVerifier([]string{secret})
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderShopifyHmac, hmacBase64(secret, string(body)))
	h.Set(webhook.HeaderShopifyWebhookID, "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043")
	h.Set(webhook.HeaderShopifyTopic, "orders/create")

	msg, err := verifier.VerifyRequest(h, body)
	fmt.Println(msg.ID, msg.Type, err)
	// Output:
	// b54557e4-bdd9-4b37-8a5f-bf7d70bcd043 orders/create <nil>
}

// Code that receives from several providers holds them as RequestVerifiers.
func ExampleRequestVerifier() {
	github, _ := webhook.NewGitHubVerifier([]string{"It's a Secret to Everybody"})
	shopify, _ := webhook.NewShopifyVerifier([]string{"shpss_example_client_secret"})
	verifiers := map[string]webhook.RequestVerifier{"github": github, "shopify": shopify}

	h := http.Header{}
	h.Set(webhook.HeaderGitHubSignature, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	for _, source := range []string{"github", "shopify"} {
		_, err := verifiers[source].VerifyRequest(h, []byte("Hello, World!"))
		fmt.Printf("%s: %v\n", source, err)
	}
	// Output:
	// github: <nil>
	// shopify: webhook: missing header: X-Shopify-Hmac-Sha256
}
