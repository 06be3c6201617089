package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func newTestVerifier(t *testing.T, now time.Time, secrets ...string) *Verifier {
	t.Helper()
	v, err := NewVerifier(secrets, WithClock(fixedClock(now)))
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func mustSign(t *testing.T, secret, id string, ts time.Time, body string) string {
	t.Helper()
	sig, err := Sign(secret, id, ts, []byte(body))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return sig
}

func TestVerifyStandardVector(t *testing.T) {
	t.Parallel()
	v := newTestVerifier(t, vectorTime, vectorSecret)
	if err := v.Verify(vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody)); err != nil {
		t.Fatalf("Verify(standard vector): %v", err)
	}
}

// message is one delivery as a receiver sees it; table cases change one field of the vector.
type message struct {
	now               time.Time
	id, ts, signature string
	body              string
}

func vectorMessage() message {
	return message{now: vectorTime, id: vectorID, ts: vectorTimestamp, signature: vectorSignature, body: vectorBody}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	otherSecret := mustNewSecret(t)
	wrongKey := mustSign(t, otherSecret, vectorID, vectorTime, vectorBody)
	later := mustSign(t, vectorSecret, vectorID, vectorTime.Add(time.Second), vectorBody)
	tests := []struct {
		name   string
		change func(m *message)
		want   error // nil: accepted
	}{
		{"valid", func(m *message) {}, nil},
		{"tampered body", func(m *message) { m.body = `{"test": 2432232315}` }, ErrNoMatchingSignature},
		{"re-serialised body", func(m *message) { m.body = `{"test":2432232314}` }, ErrNoMatchingSignature},
		{"empty body", func(m *message) { m.body = "" }, ErrNoMatchingSignature},
		{"wrong secret", func(m *message) { m.signature = wrongKey }, ErrNoMatchingSignature},
		{"other message id", func(m *message) { m.id = "msg_other" }, ErrNoMatchingSignature},
		{"signature for another timestamp", func(m *message) { m.signature = later }, ErrNoMatchingSignature},
		{"oldest accepted", func(m *message) { m.now = vectorTime.Add(DefaultTolerance) }, nil},
		{"newest accepted", func(m *message) { m.now = vectorTime.Add(-DefaultTolerance) }, nil},
		{"stale", func(m *message) { m.now = vectorTime.Add(DefaultTolerance + time.Second) }, ErrTimestampTooOld},
		{"from the future", func(m *message) { m.now = vectorTime.Add(-DefaultTolerance - time.Second) }, ErrTimestampTooNew},
		{"missing id", func(m *message) { m.id = "" }, ErrMissingHeader},
		{"blank id", func(m *message) { m.id = " " }, ErrMissingHeader},
		{"missing timestamp", func(m *message) { m.ts = "" }, ErrMissingHeader},
		{"missing signature", func(m *message) { m.signature = "" }, ErrMissingHeader},
		{"timestamp not a number", func(m *message) { m.ts = "yesterday" }, ErrInvalidTimestamp},
		{"negative timestamp", func(m *message) { m.ts = "-1614265330" }, ErrInvalidTimestamp},
		{"signed timestamp", func(m *message) { m.ts = "+1614265330" }, ErrInvalidTimestamp},
		{"fractional timestamp", func(m *message) { m.ts = "1614265330.0" }, ErrInvalidTimestamp},
		{"milliseconds timestamp", func(m *message) { m.ts = "1614265330000" }, ErrTimestampTooNew},
		{"overflowing timestamp", func(m *message) { m.ts = "99999999999999999999" }, ErrInvalidTimestamp},
		{"signature without comma", func(m *message) { m.signature = "garbage" }, ErrMalformedHeader},
		{"signature without version", func(m *message) { m.signature = strings.TrimPrefix(vectorSignature, "v1,") }, ErrMalformedHeader},
		{"only unknown versions", func(m *message) { m.signature = "v1a,abc v2,def" }, ErrNoMatchingSignature},
		{"v1 not base64", func(m *message) { m.signature = "v1,not*base64" }, ErrNoMatchingSignature},
		{"v1 empty", func(m *message) { m.signature = "v1," }, ErrNoMatchingSignature},
		{"right bytes, wrong version", func(m *message) { m.signature = "v2" + strings.TrimPrefix(vectorSignature, "v1") }, ErrNoMatchingSignature},
		{"truncated signature", func(m *message) { m.signature = vectorSignature[:len(vectorSignature)-4] }, ErrNoMatchingSignature},
		{"unknown version before valid", func(m *message) { m.signature = "v1a,abc " + vectorSignature }, nil},
		{"wrong v1 before valid", func(m *message) { m.signature = wrongKey + " " + vectorSignature }, nil},
		{"garbage entry before valid", func(m *message) { m.signature = "garbage " + vectorSignature }, nil},
		{"extra spaces", func(m *message) { m.signature = "  " + vectorSignature + "   " }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := vectorMessage()
			tt.change(&m)
			err := newTestVerifier(t, m.now, vectorSecret).Verify(m.id, m.ts, m.signature, []byte(m.body))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v, want success", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestTimestampErrorsAreInvalidTimestamp(t *testing.T) {
	t.Parallel()
	for _, err := range []error{ErrTimestampTooOld, ErrTimestampTooNew} {
		if !errors.Is(err, ErrInvalidTimestamp) {
			t.Errorf("%v does not match ErrInvalidTimestamp", err)
		}
	}
	if errors.Is(ErrTimestampTooOld, ErrTimestampTooNew) {
		t.Error("too old matches too new")
	}
}

// TestVerifierRotation is the R37 rotation-overlap case at the library level: while two secrets
// are active the sender signs with both, and receivers holding either secret, or both, accept.
func TestVerifierRotation(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := vectorSecret, secondSecret
	body := []byte(vectorBody)
	signer, err := NewSigner(newSecret, oldSecret)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	both := signer.Sign(vectorID, vectorTime, body)
	oldOnly := mustSign(t, oldSecret, vectorID, vectorTime, vectorBody)
	newOnly := mustSign(t, newSecret, vectorID, vectorTime, vectorBody)
	third := mustSign(t, mustNewSecret(t), vectorID, vectorTime, vectorBody)

	tests := []struct {
		name      string
		secrets   []string
		signature string
		ok        bool
	}{
		{"receiver has old, header has both", []string{oldSecret}, both, true},
		{"receiver has new, header has both", []string{newSecret}, both, true},
		{"receiver has both, header has both", []string{oldSecret, newSecret}, both, true},
		{"receiver has both, header has old", []string{oldSecret, newSecret}, oldOnly, true},
		{"receiver has both, header has new", []string{oldSecret, newSecret}, newOnly, true},
		{"receiver has new, header has old", []string{newSecret}, oldOnly, false},
		{"receiver has old, header has new", []string{oldSecret}, newOnly, false},
		{"receiver has both, header has a third", []string{oldSecret, newSecret}, third, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newTestVerifier(t, vectorTime, tt.secrets...).Verify(vectorID, vectorTimestamp, tt.signature, body)
			if tt.ok && err != nil {
				t.Fatalf("Verify: %v, want success", err)
			}
			if !tt.ok && !errors.Is(err, ErrNoMatchingSignature) {
				t.Fatalf("Verify error = %v, want ErrNoMatchingSignature", err)
			}
		})
	}
}

func TestVerifyHeader(t *testing.T) {
	t.Parallel()
	v := newTestVerifier(t, vectorTime, vectorSecret)
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, vectorTimestamp)
	h.Set(HeaderSignature, vectorSignature)
	if err := v.VerifyHeader(h, []byte(vectorBody)); err != nil {
		t.Fatalf("VerifyHeader: %v", err)
	}

	// An intermediary split the list over two lines; the valid entry is on the second.
	h.Del(HeaderSignature)
	h.Add(HeaderSignature, "v1a,abc")
	h.Add(HeaderSignature, vectorSignature)
	if err := v.VerifyHeader(h, []byte(vectorBody)); err != nil {
		t.Fatalf("VerifyHeader with split signature header: %v", err)
	}

	h.Del(HeaderTimestamp)
	if err := v.VerifyHeader(h, []byte(vectorBody)); !errors.Is(err, ErrMissingHeader) {
		t.Fatalf("VerifyHeader without timestamp = %v, want ErrMissingHeader", err)
	}
}

func TestVerifyConvenience(t *testing.T) {
	t.Parallel()
	secret := mustNewSecret(t)
	body := []byte(`{"type":"webhook.test"}`)
	s, err := NewSigner(secret)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	h := http.Header{}
	s.SetHeaders(h, "evt_01", time.Now(), body)
	if err := Verify(secret, h, body); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := Verify("whsec_nope", h, body); !errors.Is(err, ErrInvalidSecret) {
		t.Fatalf("Verify with bad secret = %v, want ErrInvalidSecret", err)
	}
}

func TestNewVerifierOptions(t *testing.T) {
	t.Parallel()
	if _, err := NewVerifier(nil); !errors.Is(err, ErrInvalidSecret) {
		t.Errorf("no secrets: error = %v, want ErrInvalidSecret", err)
	}
	if _, err := NewVerifier([]string{vectorSecret}, WithTolerance(0)); err == nil {
		t.Error("zero tolerance accepted")
	}
	if _, err := NewVerifier([]string{vectorSecret}, WithClock(nil)); err == nil {
		t.Error("nil clock accepted")
	}
	now := vectorTime.Add(8 * time.Minute)
	v, err := NewVerifier([]string{vectorSecret}, WithTolerance(10*time.Minute), WithClock(fixedClock(now)))
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	if err := v.Verify(vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody)); err != nil {
		t.Fatalf("Verify 8 minutes late with 10 minute tolerance: %v", err)
	}
}

func mustNewSecret(t testing.TB) string {
	t.Helper()
	s, err := NewSecret()
	if err != nil {
		t.Fatalf("NewSecret: %v", err)
	}
	return s
}

func TestZeroValuesRefuseWithoutPanic(t *testing.T) {
	t.Parallel()
	var v Verifier
	err := v.Verify(vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody))
	if !isOneOf(err, verifyErrors) {
		t.Fatalf("zero Verifier: error = %v, want a verification error", err)
	}
	var s Signer
	if got := s.Sign(vectorID, vectorTime, []byte(vectorBody)); got != "" {
		t.Fatalf("zero Signer signed: %q", got)
	}
}
