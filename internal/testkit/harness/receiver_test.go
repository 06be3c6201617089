package harness

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/webhook"
)

// The receiver verifies, answers as its Responder says, records only acceptances, and tells
// its Observer of every request, also of one the sender gave up on while it was held.
func TestReceiverAnswersAndObserves(t *testing.T) {
	rx, err := StartReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	n, url := rx.AddEndpoint()
	ep := rx.Endpoint(n)
	secret, _ := webhook.NewSecret()
	if err := ep.SetSecret(secret); err != nil {
		t.Fatal(err)
	}
	answers := map[string]Answer{"evt_ok": {Status: 200}, "evt_busy": {Status: 429, RetryAfter: "1"},
		"evt_hold": {Status: 503, Hold: time.Minute}}
	ep.SetResponder(func(r *Request) Answer { return answers[r.WebhookID] })
	var mu sync.Mutex
	seen := map[string]Request{}
	ep.SetObserver(func(r Request) { mu.Lock(); seen[r.WebhookID] = r; mu.Unlock() })

	post := func(id, key string, timeout time.Duration) (*http.Response, error) {
		body := []byte(`{"event_id":"` + id + `"}`)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		signer, _ := webhook.NewSigner(key)
		signer.SetHeaders(req.Header, id, time.Now(), body)
		return (&http.Client{Timeout: timeout}).Do(req)
	}
	for id, want := range map[string]int{"evt_ok": 200, "evt_busy": 429} {
		resp, err := post(id, secret, 5*time.Second)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("%s: %v %v, want %d", id, resp, err, want)
		}
		if id == "evt_busy" && resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("429 without Retry-After")
		}
		resp.Body.Close()
	}
	if _, err := post("evt_hold", secret, 200*time.Millisecond); err == nil {
		t.Fatal("a held request answered before the client's timeout")
	}
	other, _ := webhook.NewSecret()
	if resp, err := post("evt_forged", other, 5*time.Second); err != nil || resp.StatusCode != 401 {
		t.Fatalf("a request signed with another secret: %v %v, want 401", resp, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		done := len(seen) == 4
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["evt_ok"].Status != 200 || seen["evt_busy"].Status != 429 || seen["evt_hold"].Status != 0 ||
		seen["evt_forged"].Verified || !seen["evt_ok"].Verified {
		t.Fatalf("observed %+v", seen)
	}
	got, bad := ep.Snapshot()
	if len(got) != 1 || got["evt_ok"].Count != 1 || bad != 1 {
		t.Fatalf("receipts %v, bad %d; want only evt_ok accepted and one bad signature", got, bad)
	}
	if left := ep.Unreceived([]string{"evt_ok", "evt_busy"}); len(left) != 1 || left[0] != "evt_busy" {
		t.Fatalf("Unreceived = %v", left)
	}
}

// Down refuses connections; ComeBack listens on the same address again.
func TestReceiverDownAndBack(t *testing.T) {
	rx, err := StartReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	_, url := rx.AddEndpoint()
	rx.Down()
	if _, err := http.Post(url, "application/json", nil); err == nil {
		t.Fatal("a request reached a receiver that is down")
	}
	if err := rx.ComeBack(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatalf("after ComeBack: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized { // no secret set: nothing verifies
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
}
