package secretbox_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/secretbox"
)

func mustKey(t testing.TB, b byte) secretbox.Key {
	t.Helper()
	k, err := secretbox.NewKey(bytes.Repeat([]byte{b}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustRing(t testing.TB, active string, keys ...secretbox.NamedKey) secretbox.Keyring {
	t.Helper()
	r, err := secretbox.NewKeyring(active, keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
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
	ring := mustRing(t, "k1", secretbox.NamedKey{ID: "k1", Key: key})
	// The same key id on another key: the id alone opens nothing.
	impostor := mustRing(t, "k1", secretbox.NamedKey{ID: "k1", Key: other})
	aad := secretbox.AAD("ep_1", "sec_1")
	plain := []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	sealed, err := ring.Seal(plain, aad)
	if err != nil {
		t.Fatal(err)
	}
	header := len("hsb") + 2 + len("k1")
	if len(sealed) != header+secretbox.LegacyOverhead+len(plain) {
		t.Fatalf("sealed is %d bytes, want %d", len(sealed), header+secretbox.LegacyOverhead+len(plain))
	}
	if id, ok := secretbox.KeyID(sealed); !ok || id != "k1" {
		t.Fatalf("KeyID = %q, %v; want k1", id, ok)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("sealed value contains the plaintext")
	}
	again, _ := ring.Seal(plain, aad)
	if bytes.Equal(sealed[header:header+secretbox.NonceSize], again[header:header+secretbox.NonceSize]) {
		t.Fatal("two seals share a nonce")
	}

	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	// The id byte changed to another valid id ("k0"), which the keyring does not hold.
	otherID := bytes.Clone(sealed)
	otherID[header-1] = '0'
	tests := []struct {
		name   string
		ring   secretbox.Keyring
		sealed []byte
		aad    []byte
		ok     bool
	}{
		{"same key and row", ring, sealed, aad, true},
		{"second seal", ring, again, aad, true},
		{"wrong key under the same id", impostor, sealed, aad, false},
		{"other secret of the endpoint", ring, sealed, secretbox.AAD("ep_1", "sec_2"), false},
		{"same secret id on another endpoint", ring, sealed, secretbox.AAD("ep_2", "sec_1"), false},
		{"no aad", ring, sealed, nil, false},
		{"magic tampered", ring, flip(0), aad, false},
		{"version tampered", ring, flip(3), aad, false},
		{"id length tampered", ring, flip(4), aad, false},
		{"id tampered", ring, otherID, aad, false},
		{"nonce tampered", ring, flip(header), aad, false},
		{"ciphertext tampered", ring, flip(header + secretbox.NonceSize + 3), aad, false},
		{"tag tampered", ring, flip(len(sealed) - 1), aad, false},
		{"truncated", ring, sealed[:len(sealed)-1], aad, false},
		{"extended", ring, append(bytes.Clone(sealed), 0), aad, false},
		{"header only", ring, sealed[:header], aad, false},
		{"empty", ring, nil, aad, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ring.Open(tt.sealed, tt.aad)
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

// A value sealed under a key id the keyring does not hold says which id, and nothing of the
// value.
func TestUnknownKeyID(t *testing.T) {
	old := mustRing(t, "2024-01", secretbox.NamedKey{ID: "2024-01", Key: mustKey(t, 1)})
	sealed, err := old.Seal([]byte("whsec_secret"), secretbox.AAD("ep_1", "sec_1"))
	if err != nil {
		t.Fatal(err)
	}
	ring := mustRing(t, "2025-01", secretbox.NamedKey{ID: "2025-01", Key: mustKey(t, 2)}, secretbox.NamedKey{ID: "2024-06", Key: mustKey(t, 3)})
	_, err = ring.Open(sealed, secretbox.AAD("ep_1", "sec_1"))
	var unknown *secretbox.UnknownKeyError
	if !errors.As(err, &unknown) || unknown.ID != "2024-01" || !errors.Is(err, secretbox.ErrUnknownKey) || !errors.Is(err, secretbox.ErrOpen) {
		t.Fatalf("Open = %v; want an UnknownKeyError for 2024-01 matching ErrUnknownKey and ErrOpen", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `"2024-01"`) || !strings.Contains(msg, "2025-01, 2024-06") {
		t.Fatalf("error %q does not name the id and the keyring's ids", msg)
	}
	if strings.Contains(msg, hex.EncodeToString(sealed[10:20])) || strings.Contains(msg, base64.StdEncoding.EncodeToString(sealed)[8:24]) {
		t.Fatalf("error %q repeats the value", msg)
	}
	if _, _, err := ring.Reseal(sealed, secretbox.AAD("ep_1", "sec_1")); !errors.As(err, &unknown) {
		t.Fatalf("Reseal = %v; want the UnknownKeyError", err)
	}
}

// legacyVector was sealed in the format of before key ids (nonce || AES-256-GCM), under the
// key of bytes 0…31, AAD "ep_01J/sec_01J".
const (
	legacyKey    = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	legacyVector = "6c65676163796e6f6e636521503eaf18f3ed84338c10b50bd73a4d3382be5fc7c012dfeb3ccaf701c642a87f3796b3e7eb7d7952e61d21e88c18a06da2129dc67127"
	legacyPlain  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

// Values sealed before key ids existed keep opening: under HOOKSTREAM_SECRET_KEY alone, and
// under that key kept as an old key of a keyring whose active key is new; Reseal moves them to
// the active key, and a tampered one is refused.
func TestLegacyValuesOpen(t *testing.T) {
	old, err := secretbox.ParseKey(legacyKey)
	if err != nil {
		t.Fatal(err)
	}
	vector, _ := hex.DecodeString(legacyVector)
	aad := secretbox.AAD("ep_01J", "sec_01J")
	if _, ok := secretbox.KeyID(vector); ok {
		t.Fatal("the legacy vector reads as keyed")
	}
	single := secretbox.KeyringOf(old)
	rotated := mustRing(t, "new", secretbox.NamedKey{ID: "new", Key: mustKey(t, 9)}, secretbox.NamedKey{ID: secretbox.DefaultKeyID, Key: old})
	for name, ring := range map[string]secretbox.Keyring{"one key": single, "old key of a keyring": rotated} {
		t.Run(name, func(t *testing.T) {
			got, err := ring.Open(vector, aad)
			if err != nil || string(got) != legacyPlain {
				t.Fatalf("Open = %q, %v", got, err)
			}
			resealed, changed, err := ring.Reseal(vector, aad)
			if err != nil || !changed {
				t.Fatalf("Reseal = %v, %v; want a new value", changed, err)
			}
			if id, ok := secretbox.KeyID(resealed); !ok || id != ring.Active() {
				t.Fatalf("resealed under %q (%v), want %q", id, ok, ring.Active())
			}
			if got, err := ring.Open(resealed, aad); err != nil || string(got) != legacyPlain {
				t.Fatalf("Open(resealed) = %q, %v", got, err)
			}
			if _, err := ring.Open(vector, secretbox.AAD("ep_01J", "sec_02J")); !errors.Is(err, secretbox.ErrOpen) {
				t.Fatalf("legacy value opened for another row: %v", err)
			}
			for _, i := range []int{0, secretbox.NonceSize + 2, len(vector) - 1} {
				b := bytes.Clone(vector)
				b[i] ^= 0x80
				if got, err := ring.Open(b, aad); !errors.Is(err, secretbox.ErrOpen) || got != nil {
					t.Fatalf("tampered at %d: Open = %q, %v; want ErrOpen", i, got, err)
				}
			}
		})
	}
	// Once the old key is gone, the legacy value no longer opens, and the error is no
	// UnknownKeyError: a legacy value names no key.
	gone := mustRing(t, "new", secretbox.NamedKey{ID: "new", Key: mustKey(t, 9)})
	_, err = gone.Open(vector, aad)
	if !errors.Is(err, secretbox.ErrOpen) || errors.Is(err, secretbox.ErrUnknownKey) || !strings.Contains(err.Error(), "every key") {
		t.Fatalf("Open without the old key = %v", err)
	}
}

// A legacy value whose random nonce begins like a keyed header, naming a key the keyring has
// or lacks, still opens as legacy.
func TestLegacyValueThatLooksKeyed(t *testing.T) {
	raw := bytes.Repeat([]byte{4}, secretbox.KeySize)
	ring := mustRing(t, "k1", secretbox.NamedKey{ID: "k1", Key: mustKey(t, 4)})
	aad := secretbox.AAD("ep", "sec")
	for _, nonce := range []string{"hsb\x01\x02k1zzzzz", "hsb\x01\x02zzzzzzz"} {
		sealed := legacySeal(t, raw, []byte(nonce), []byte("whsec_x"), aad)
		if _, ok := secretbox.KeyID(sealed); !ok {
			t.Fatalf("nonce %q does not look keyed", nonce)
		}
		if got, err := ring.Open(sealed, aad); err != nil || string(got) != "whsec_x" {
			t.Fatalf("nonce %q: Open = %q, %v", nonce, got, err)
		}
		if _, changed, err := ring.Reseal(sealed, aad); err != nil || !changed {
			t.Fatalf("nonce %q: Reseal = %v, %v; a legacy value is never current", nonce, changed, err)
		}
	}
}

func TestReseal(t *testing.T) {
	k1, k2 := secretbox.NamedKey{ID: "k1", Key: mustKey(t, 1)}, secretbox.NamedKey{ID: "k2", Key: mustKey(t, 2)}
	before := mustRing(t, "k1", k1)
	after := mustRing(t, "k2", k1, k2)
	aad := secretbox.AAD("ep", "sec")
	sealed, err := before.Seal([]byte("whsec_y"), aad)
	if err != nil {
		t.Fatal(err)
	}
	if same, changed, err := before.Reseal(sealed, aad); err != nil || changed || !bytes.Equal(same, sealed) {
		t.Fatalf("Reseal under the active key = %v, %v; want the value unchanged", changed, err)
	}
	moved, changed, err := after.Reseal(sealed, aad)
	if err != nil || !changed {
		t.Fatalf("Reseal = %v, %v", changed, err)
	}
	if id, _ := secretbox.KeyID(moved); id != "k2" {
		t.Fatalf("resealed under %q, want k2", id)
	}
	onlyNew := mustRing(t, "k2", k2)
	if got, err := onlyNew.Open(moved, aad); err != nil || string(got) != "whsec_y" {
		t.Fatalf("the new key alone: Open = %q, %v", got, err)
	}
	if _, _, err := after.Reseal(sealed, secretbox.AAD("ep", "other")); !errors.Is(err, secretbox.ErrOpen) {
		t.Fatalf("Reseal with the wrong row: %v", err)
	}
}

func TestNewKeyring(t *testing.T) {
	a, b := mustKey(t, 1), mustKey(t, 2)
	tests := []struct {
		name    string
		active  string
		keys    []secretbox.NamedKey
		wantErr string // substring; empty means success
		want    string // the keyring printed
	}{
		{"one key, active implied", "", []secretbox.NamedKey{{"k1", a}}, "", "secretbox.Keyring(active k1; keys k1)"},
		{"two keys", "k2", []secretbox.NamedKey{{"k1", a}, {"k2", b}}, "", "secretbox.Keyring(active k2; keys k2, k1)"},
		{"no keys", "", nil, "no keys", ""},
		{"no active among several", "", []secretbox.NamedKey{{"k1", a}, {"k2", b}}, "2 keys (k1, k2) and none named active", ""},
		{"active missing", "k3", []secretbox.NamedKey{{"k1", a}, {"k2", b}}, `active key id "k3" is not among the keys (k1, k2)`, ""},
		{"duplicate id", "k1", []secretbox.NamedKey{{"k1", a}, {"k1", b}}, `key id "k1" is given twice`, ""},
		{"one key under two ids", "k1", []secretbox.NamedKey{{"k1", a}, {"k2", a}}, `key ids "k1" and "k2" are the same key`, ""},
		{"empty id", "", []secretbox.NamedKey{{"", a}}, "the id of key 1 is not", ""},
		{"id with a colon", "", []secretbox.NamedKey{{"a:b", a}}, "the id of key 1 is not", ""},
		{"id too long", "", []secretbox.NamedKey{{strings.Repeat("x", 65), a}}, "the id of key 1 is not", ""},
		{"zero key", "", []secretbox.NamedKey{{"k1", secretbox.Key{}}}, `key id "k1" has no key`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := secretbox.NewKeyring(tt.active, tt.keys)
			if tt.wantErr == "" {
				if err != nil || r.String() != tt.want {
					t.Fatalf("NewKeyring = %v, %v; want %s", r, err, tt.want)
				}
				return
			}
			if !errors.Is(err, secretbox.ErrInvalidKey) || !strings.Contains(err.Error(), tt.wantErr) || !r.IsZero() {
				t.Fatalf("NewKeyring error %v, want ErrInvalidKey with %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseKeyList(t *testing.T) {
	k1, _ := secretbox.GenerateKey()
	k2, _ := secretbox.GenerateKey()
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	tests := []struct {
		name    string
		in      string
		ids     string // the ids parsed, comma-separated
		wantErr string
	}{
		{"commas", "k1:" + k1 + ", k2:" + k2, "k1,k2", ""},
		{"a mounted file", "# rotated 2025-01\nk2:" + k2 + "\n\nk1:" + k1 + "\n", "k2,k1", ""},
		{"unpadded", "k1:" + strings.TrimRight(k1, "="), "k1", ""},
		{"empty", " \n,\n", "", "no entries"},
		{"no id", k1, "", "entry 1 is not id:base64key"},
		{"bad id", "k1:" + k1 + ",bad id:" + k2, "", "the id of entry 2 is not"},
		{"short key", "k1:" + k1 + ",k2:" + short, "", `key id "k2": secretbox: invalid key: key is 16 bytes, want 32`},
		{"not base64", "k1:***", "", `key id "k1": secretbox: invalid key: not standard base64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := secretbox.ParseKeyList(tt.in)
			if tt.wantErr == "" {
				var ids []string
				for _, k := range keys {
					ids = append(ids, k.ID)
				}
				if err != nil || strings.Join(ids, ",") != tt.ids {
					t.Fatalf("ParseKeyList = %v, %v; want ids %s", ids, err, tt.ids)
				}
				return
			}
			if !errors.Is(err, secretbox.ErrInvalidKey) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseKeyList error %v, want %q", err, tt.wantErr)
			}
			for _, k := range []string{k1, k2, short} {
				if strings.Contains(err.Error(), k[:12]) {
					t.Fatalf("error repeats a key: %v", err)
				}
			}
		})
	}
}

func TestZeroKeyringRefused(t *testing.T) {
	var zero secretbox.Keyring
	if _, err := zero.Seal([]byte("x"), nil); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Fatalf("Seal with zero keyring: %v", err)
	}
	if _, err := zero.Open(make([]byte, 64), nil); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Fatalf("Open with zero keyring: %v", err)
	}
	if !secretbox.KeyringOf(secretbox.Key{}).IsZero() {
		t.Fatal("KeyringOf(zero key) holds a key")
	}
}

func TestKeyDoesNotPrint(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, 32)
	k, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	ring := secretbox.KeyringOf(k)
	cfg := struct {
		Key  secretbox.Key
		Ring secretbox.Keyring
	}{k, ring}
	for _, s := range []string{fmt.Sprint(k), fmt.Sprint(ring), fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg)} {
		if strings.Contains(strings.ToLower(s), "abab") || strings.Contains(s, "171") ||
			!strings.Contains(s, "redacted") && !strings.Contains(s, "Keyring(active default; keys default)") {
			t.Fatalf("key printed as %q", s)
		}
	}
}

// Open never panics, whatever the bytes.
func FuzzOpen(f *testing.F) {
	ring := mustRing(f, "k1", secretbox.NamedKey{ID: "k1", Key: mustKey(f, 1)})
	sealed, _ := ring.Seal([]byte("whsec_x"), []byte("a"))
	vector, _ := hex.DecodeString(legacyVector)
	f.Add(sealed, []byte("a"))
	f.Add(vector, []byte("a"))
	f.Add([]byte("hsb\x01\xff"), []byte{})
	f.Fuzz(func(t *testing.T, b, aad []byte) {
		plain, err := ring.Open(b, aad)
		if err == nil && string(plain) != "whsec_x" {
			t.Fatalf("opened %q", plain)
		}
	})
}

func ExampleKeyring() {
	old, _ := secretbox.ParseKey("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	newer, _ := secretbox.ParseKey("ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=")
	aad := secretbox.AAD("ep_01J", "sec_01J")
	sealed, _ := secretbox.KeyringOf(old).Seal([]byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), aad)

	// The new key seals; the old one, kept under its id, still opens.
	ring, err := secretbox.NewKeyring("2025-01", []secretbox.NamedKey{{ID: "2025-01", Key: newer}, {ID: "default", Key: old}})
	if err != nil {
		panic(err)
	}
	secret, err := ring.Open(sealed, aad)
	fmt.Println(string(secret), err)
	resealed, changed, _ := ring.Reseal(sealed, aad)
	id, _ := secretbox.KeyID(resealed)
	fmt.Println(changed, id)
	// Output:
	// whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw <nil>
	// true 2025-01
}

// legacySeal seals as the format of before key ids did: nonce || AES-256-GCM(key, nonce,
// plaintext, aad). raw is the key's bytes.
func legacySeal(t *testing.T, raw, nonce, plaintext, aad []byte) []byte {
	t.Helper()
	block, err := aes.NewCipher(raw)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return gcm.Seal(bytes.Clone(nonce), nonce, plaintext, aad)
}
