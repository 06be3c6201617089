package sender

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		in      string
		secrets []string // must not survive
		keep    []string // must survive
	}{
		{`{"error":"bad signature for whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`, []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, []string{"bad signature"}},
		{"Authorization: Bearer abc.def-ghi_jkl", []string{"abc.def-ghi_jkl"}, []string{"Authorization"}},
		{`{"authorization":"Basic dXNlcjpwYXNz"}`, []string{"dXNlcjpwYXNz"}, []string{"authorization"}},
		{"got bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", []string{"eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxIn0"}, []string{"got"}},
		{`{"api_key": "k_123456789", "status": "down"}`, []string{"k_123456789"}, []string{"status", "down"}},
		{"token=s3cr3t&x=1", []string{"s3cr3t"}, []string{"x=1"}},
		{"password: hunter2", []string{"hunter2"}, nil},
		{"client_secret=abc123", []string{"abc123"}, nil},
		{"webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []string{"g0hM9SsE+OTPJTGt"}, nil},
		{"echo v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", []string{"g0hM9SsE", "AAAAAAAAAAAAAAAAAAAA"}, []string{"echo"}},
		{"key sk-proj-abcdefghijklmnopqrstuvwx leaked", []string{"abcdefghijklmnopqrstuvwx"}, []string{"leaked"}},
		{"x-api-key: 0123456789abcdef", []string{"0123456789abcdef"}, nil},
		{"Set-Cookie: session=abcdef; Path=/", []string{"abcdef"}, []string{"Path"}},
		{"service unavailable, try later", nil, []string{"service unavailable, try later"}},
	}
	for _, tt := range tests {
		got := Redact(tt.in)
		for _, s := range tt.secrets {
			if strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q still holds %q", tt.in, got, s)
			}
		}
		for _, s := range tt.keep {
			if !strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q lost %q", tt.in, got, s)
			}
		}
	}
}

func TestExcerptBounds(t *testing.T) {
	long := strings.Repeat("é", 3000) // 2 bytes each: the cut must not split one
	for _, in := range [][]byte{
		[]byte(long),
		append([]byte(strings.Repeat("a", 1020)), []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")...),
		{0xff, 0xfe, 0x00, 'o', 'k'},
		[]byte(strings.Repeat("x", 70000)),
	} {
		got := excerpt(in)
		if len(got) > MaxExcerptBytes || !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
			t.Fatalf("excerpt is %d bytes, valid UTF-8 %v, NUL %v", len(got), utf8.ValidString(got), strings.ContainsRune(got, 0))
		}
		if strings.Contains(got, "MfKQ9r8G") {
			t.Fatalf("excerpt keeps the start of a secret cut at the limit: %q", got[len(got)-40:])
		}
	}
	if got := excerpt([]byte("short")); got != "short" {
		t.Fatalf("excerpt(short) = %q", got)
	}
}
