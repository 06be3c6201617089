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

// A response excerpt is stored as PostgreSQL text, which holds neither NUL bytes nor invalid
// UTF-8: each becomes U+FFFD, where it was.
func TestExcerptReplacesNULAndInvalidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"ok\x00done":         "ok\uFFFDdone",
		"\x00\x00":           "\uFFFD\uFFFD",
		"bad \xff\xfe bytes": "bad \uFFFD bytes",
		"cut \xe2\x82":       "cut \uFFFD",
		"fine é ✓":           "fine é ✓",
	} {
		if got := excerpt([]byte(in)); got != want {
			t.Errorf("excerpt(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzExcerpt checks what the recorder relies on for any response: at most MaxExcerptBytes of
// valid UTF-8 without a NUL byte.
func FuzzExcerpt(f *testing.F) {
	for _, s := range []string{"", "ok", "a\x00b", "\xff\xfe\x00", strings.Repeat("é", 3000), "Authorization: Bearer x\x00y"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := excerpt(b)
		if len(got) > MaxExcerptBytes || !utf8.ValidString(got) || strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("excerpt(%q) = %q: %d bytes, valid UTF-8 %v", b, got, len(got), utf8.ValidString(got))
		}
	})
}

// One row per kind of credential a receiver may put in its answer: none survives redaction,
// and the words around it do.
func TestRedactCredentials(t *testing.T) {
	const pemBody = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"
	tests := []struct {
		kind, in string
		secrets  []string // must not survive
		keep     []string // must survive
	}{
		{"aws_secret_access_key, ini", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion = eu-west-1",
			[]string{"wJalrXUtnFEMI", "bPxRfiCYEXAMPLEKEY"}, []string{"aws_secret_access_key", "region = eu-west-1"}},
		{"aws_secret_access_key, env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY rest",
			[]string{"wJalrXUtnFEMI"}, []string{"AWS_SECRET_ACCESS_KEY", "rest"}},
		{"SecretAccessKey, JSON", `{"AccessKeyId":"x","SecretAccessKey":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`,
			[]string{"wJalrXUtnFEMI"}, []string{"SecretAccessKey"}},
		{"AWS access key id AKIA", `{"key_id":"AKIAIOSFODNN7EXAMPLE","ok":false}`, []string{"IOSFODNN7EXAMPLE"}, []string{`"ok":false`}},
		{"AWS temporary key id ASIA", "using ASIAY34FZKBOKMUTVV7A now", []string{"Y34FZKBOKMUTVV7A"}, []string{"using", "now"}},
		{"PEM private key", "key:\n-----BEGIN PRIVATE KEY-----\n" + pemBody + "\n-----END PRIVATE KEY-----\nthanks",
			[]string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "MzEfYyjiWA4R4"}, []string{"thanks", "BEGIN PRIVATE KEY"}},
		{"PEM RSA private key, JSON-escaped", `{"pem":"-----BEGIN RSA PRIVATE KEY-----\n` + strings.ReplaceAll(pemBody, "\n", `\n`) + `\n-----END RSA PRIVATE KEY-----","n":1}`,
			[]string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "MzEfYyjiWA4R4"}, []string{`"n":1`}},
		{"PEM private key cut before its end", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody,
			[]string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "MzEfYyjiWA4R4"}, nil},
		{"password in a URL", "cannot reach postgres://app:s3cr3t-pw@db.internal:5432/prod (timeout)",
			[]string{"s3cr3t-pw"}, []string{"postgres://app:", "@db.internal:5432/prod", "(timeout)"}},
		{"password in an https URL", `{"callback":"https://user:hunter2@example.com/hook"}`, []string{"hunter2"}, []string{"example.com/hook"}},
		{"GitHub ghp_", "token ghp_1234567890abcdefghijABCDEFGHIJ123456 leaked", []string{"1234567890abcdefghij"}, []string{"leaked"}},
		{"GitHub gho_", "gho_16C7e42F292c6912E7710c838347Ae178B4a ok", []string{"16C7e42F292c6912E771"}, []string{"ok"}},
		{"GitHub ghs_", "(ghs_abcdefghijklmnopqrstuvwxyz0123456789)", []string{"abcdefghijklmnopqrst"}, []string{"(", ")"}},
		{"GitHub github_pat_", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789abcdefghijk done",
			[]string{"11ABCDEFG0123456789", "abcdefghijklmnopqrstuvwxyz"}, []string{"done"}},
		{"Slack xoxb-", "slack says xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", []string{"AbCdEfGhIjKlMnOpQrStUvWx", "1234567890123"}, []string{"slack says"}},
		{"Slack xoxp-", "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef!", []string{"0123456789abcdef0123"}, []string{"!"}},
		{"Stripe sk_live_", "charge with sk_live_4eC39HqLyjWDarjtT1zdp7dc failed", []string{"4eC39HqLyjWDarjtT1zdp7dc"}, []string{"failed"}},
		{"Stripe rk_live_", `{"key":"rk_live_51H8abcdefghijklmnopqrstuv"}`, []string{"51H8abcdefghijklmnopqrstuv"}, []string{`"key"`}},
		{"Standard Webhooks whsec_", "secret is whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw.", []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, []string{"secret is"}},
		{"GitLab glpat-", "glpat-xxxxXXXXxxxx1234yyZZ used", []string{"xxxxXXXXxxxx1234yyZZ"}, []string{"used"}},
		{"Google AIza", `{"maps_key":"AIzaSyA1234567890abcdefghijklmnopqrstuv"}`, []string{"SyA1234567890abcdefghijklmnopqrstuv"}, []string{"maps_key"}},
		{"bearer", "Authorization: Bearer abc.def-ghi_jkl", []string{"abc.def-ghi_jkl"}, []string{"Authorization"}},
	}
	for _, tt := range tests {
		got := Redact(tt.in)
		for _, s := range tt.secrets {
			if strings.Contains(got, s) {
				t.Errorf("%s: Redact(%q) = %q still holds %q", tt.kind, tt.in, got, s)
			}
		}
		for _, s := range tt.keep {
			if !strings.Contains(got, s) {
				t.Errorf("%s: Redact(%q) = %q lost %q", tt.kind, tt.in, got, s)
			}
		}
		if !strings.Contains(got, redacted) {
			t.Errorf("%s: Redact(%q) = %q does not say what it removed", tt.kind, tt.in, got)
		}
	}
}

// What is not a credential is left exactly as it is.
func TestRedactLeavesOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"service unavailable, try later",
		`{"status":"down","retry_after":30,"request_id":"req_8f3a2b"}`,
		"see https://example.com/docs/errors#429 and http://127.0.0.1:8080/health for details",
		"mail ops@example.com at 12:30:45 UTC",
		"AKIA is an AWS prefix; ghp is not a token; sk-short",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
		"<html><body><h1>502 Bad Gateway</h1><p>nginx/1.25.3</p></body></html>",
		"Das Konto ist gesperrt. Veuillez réessayer. 请稍后再试。",
		"ssh://git@github.com/org/repo.git",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}
