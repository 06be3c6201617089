package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// hookstream receive answers a request signed with its secret 204 and prints it as verified,
// refuses any other with 401 and a line saying why, never prints the secret, and exits 0 on
// interruption.
func TestReceive(t *testing.T) {
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out testenv.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"receive", "--port", "0", "--secret", secret}, &out) }()
	waitOutput(t, &out, "Receiving on", cancel)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(out.String())

	post := func(sign func(h http.Header, body []byte)) int {
		t.Helper()
		body := []byte(`{"type":"customer.created","event_id":"evt_1","occurred_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}`)
		req, _ := http.NewRequest(http.MethodPost, url+"hooks", strings.NewReader(string(body)))
		sign(req.Header, body)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	signer, err := webhook.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	if status := post(func(h http.Header, body []byte) { signer.SetHeaders(h, "msg_good", time.Now(), body) }); status != http.StatusNoContent {
		t.Errorf("a signed request: %d, want 204", status)
	}
	other, _ := webhook.NewSecret()
	otherSigner, _ := webhook.NewSigner(other)
	if status := post(func(h http.Header, body []byte) { otherSigner.SetHeaders(h, "msg_bad", time.Now(), body) }); status != http.StatusUnauthorized {
		t.Errorf("a request signed with another secret: %d, want 401", status)
	}
	if status := post(func(http.Header, []byte) {}); status != http.StatusUnauthorized {
		t.Errorf("an unsigned request: %d, want 401", status)
	}
	waitOutput(t, &out, "missing header", cancel)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("receive, interrupted: %v", err)
	}
	got := out.String()
	for _, want := range []string{`verified  customer.created +msg_good  \d+ms`, `refused   POST /hooks: .*signature`, `refused   POST /hooks: .*missing header`} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("the output has no line like %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, strings.TrimPrefix(secret, "whsec_")) {
		t.Errorf("the output shows the secret:\n%s", got)
	}
}
