package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The published Standard Webhooks test vector (R15).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = "1614265330"
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

var vectorTime = time.Unix(1614265330, 0)

// secondSecret stands for the new secret of a rotation.
const secondSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

func TestSignStandardVector(t *testing.T) {
	t.Parallel()
	got, err := Sign(vectorSecret, vectorID, vectorTime, []byte(vectorBody))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if got != vectorSignature {
		t.Fatalf("Sign = %q, want %q", got, vectorSignature)
	}
}

func TestSignTruncatesToSeconds(t *testing.T) {
	t.Parallel()
	got, err := Sign(vectorSecret, vectorID, vectorTime.Add(999*time.Millisecond), []byte(vectorBody))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if got != vectorSignature {
		t.Fatalf("Sign with sub-second time = %q, want %q", got, vectorSignature)
	}
}

func TestSignBadSecret(t *testing.T) {
	t.Parallel()
	if _, err := Sign("whsec_short", vectorID, vectorTime, nil); !errors.Is(err, ErrInvalidSecret) {
		t.Fatalf("Sign error = %v, want ErrInvalidSecret", err)
	}
}

func TestSignerRotationSignsWithEverySecret(t *testing.T) {
	t.Parallel()
	s, err := NewSigner(secondSecret, vectorSecret)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	got := s.Sign(vectorID, vectorTime, []byte(vectorBody))
	newSig, err := Sign(secondSecret, vectorID, vectorTime, []byte(vectorBody))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if want := newSig + " " + vectorSignature; got != want {
		t.Fatalf("rotation header = %q, want %q", got, want)
	}
}

func TestSignerSetHeaders(t *testing.T) {
	t.Parallel()
	s, err := NewSigner(vectorSecret)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	h := http.Header{}
	s.SetHeaders(h, vectorID, vectorTime, []byte(vectorBody))
	for name, want := range map[string]string{
		HeaderID:        vectorID,
		HeaderTimestamp: vectorTimestamp,
		HeaderSignature: vectorSignature,
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if len(h) != 3 {
		t.Errorf("SetHeaders set %d headers, want 3: %v", len(h), h)
	}
}

func TestSignerDiffersPerInput(t *testing.T) {
	t.Parallel()
	s, err := NewSigner(vectorSecret)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	base := s.Sign(vectorID, vectorTime, []byte(vectorBody))
	variants := map[string]string{
		"id":        s.Sign(vectorID+"x", vectorTime, []byte(vectorBody)),
		"timestamp": s.Sign(vectorID, vectorTime.Add(time.Second), []byte(vectorBody)),
		"body":      s.Sign(vectorID, vectorTime, []byte(strings.ReplaceAll(vectorBody, " ", ""))),
	}
	for what, sig := range variants {
		if sig == base {
			t.Errorf("changing the %s did not change the signature", what)
		}
	}
}
