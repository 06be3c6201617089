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
