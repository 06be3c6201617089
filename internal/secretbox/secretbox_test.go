package secretbox_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/secretbox"
)

func mustKey(t *testing.T, b byte) secretbox.Key {
	t.Helper()
	k, err := secretbox.NewKey(bytes.Repeat([]byte{b}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseKey(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, 32)
	padded := base64.StdEncoding.EncodeToString(raw)
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; empty means success
	}{
		{"padded", padded, ""},
		{"unpadded", strings.TrimRight(padded, "="), ""},
		{"trailing newline", padded + "\n", ""},
		{"empty", "", "empty"},
		{"blank", "  \n", "empty"},
		{"not base64", "not*base64!", "not standard base64"},
		{"url alphabet", base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), "not standard base64"},
		{"16 bytes", base64.StdEncoding.EncodeToString(raw[:16]), "16 bytes, want 32"},
		{"64 bytes", base64.StdEncoding.EncodeToString(append(raw, raw...)), "64 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := secretbox.ParseKey(tt.in)
			if tt.wantErr == "" {
				if err != nil || k.IsZero() {
					t.Fatalf("ParseKey: %v (zero %v)", err, k.IsZero())
				}
				return
			}
			if !errors.Is(err, secretbox.ErrInvalidKey) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseKey error %v, want ErrInvalidKey with %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), tt.in) && strings.TrimSpace(tt.in) != "" {
				t.Fatalf("error repeats the key: %v", err)
			}
		})
	}
}

func TestGenerateKeyParses(t *testing.T) {
	s, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secretbox.ParseKey(s); err != nil {
		t.Fatalf("generated key does not parse: %v", err)
	}
}

func TestSealOpen(t *testing.T) {
	key, other := mustKey(t, 1), mustKey(t, 2)
	aad := secretbox.AAD("ep_1", "sec_1")
	plain := []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	sealed, err := secretbox.Seal(key, plain, aad)
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed) != len(plain)+secretbox.Overhead {
		t.Fatalf("sealed is %d bytes, want %d", len(sealed), len(plain)+secretbox.Overhead)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("sealed value contains the plaintext")
	}
	again, _ := secretbox.Seal(key, plain, aad)
	if bytes.Equal(sealed[:secretbox.NonceSize], again[:secretbox.NonceSize]) {
		t.Fatal("two seals share a nonce")
	}

	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	tests := []struct {
		name   string
		key    secretbox.Key
		sealed []byte
		aad    []byte
		ok     bool
	}{
		{"same key and row", key, sealed, aad, true},
		{"second seal", key, again, aad, true},
		{"wrong key", other, sealed, aad, false},
		{"other secret of the endpoint", key, sealed, secretbox.AAD("ep_1", "sec_2"), false},
		{"same secret id on another endpoint", key, sealed, secretbox.AAD("ep_2", "sec_1"), false},
		{"no aad", key, sealed, nil, false},
		{"nonce tampered", key, flip(0), aad, false},
		{"ciphertext tampered", key, flip(secretbox.NonceSize + 3), aad, false},
		{"tag tampered", key, flip(len(sealed) - 1), aad, false},
		{"truncated", key, sealed[:len(sealed)-1], aad, false},
		{"extended", key, append(bytes.Clone(sealed), 0), aad, false},
		{"shorter than nonce and tag", key, sealed[:secretbox.Overhead-1], aad, false},
		{"empty", key, nil, aad, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secretbox.Open(tt.key, tt.sealed, tt.aad)
			if tt.ok {
				if err != nil || !bytes.Equal(got, plain) {
					t.Fatalf("Open = %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, secretbox.ErrOpen) || got != nil {
				t.Fatalf("Open = %q, %v; want ErrOpen", got, err)
			}
		})
	}
}

func TestZeroKeyRefused(t *testing.T) {
	var zero secretbox.Key
	if _, err := secretbox.Seal(zero, []byte("x"), nil); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Fatalf("Seal with zero key: %v", err)
	}
	if _, err := secretbox.Open(zero, make([]byte, 64), nil); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Fatalf("Open with zero key: %v", err)
	}
}

func TestKeyDoesNotPrint(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, 32)
	k, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	cfg := struct{ Key secretbox.Key }{k}
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg)} {
		if strings.Contains(strings.ToLower(s), "abab") || strings.Contains(s, "171") || !strings.Contains(s, "redacted") {
			t.Fatalf("key printed as %q", s)
		}
	}
}

func ExampleSeal() {
	key, err := secretbox.ParseKey("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err != nil {
		panic(err)
	}
	aad := secretbox.AAD("ep_01J", "sec_01J")
	sealed, err := secretbox.Seal(key, []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), aad)
	if err != nil {
		panic(err)
	}
	secret, err := secretbox.Open(key, sealed, aad)
	fmt.Println(string(secret), err)
	_, err = secretbox.Open(key, sealed, secretbox.AAD("ep_other", "sec_01J"))
	fmt.Println(err != nil)
	// Output:
	// whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw <nil>
	// true
}
