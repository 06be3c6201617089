package secretbox

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
)

// DefaultKeyID is the id of the key HOOKSTREAM_SECRET_KEY gives (KeyringOf).
const DefaultKeyID = "default"

// MaxKeyIDLength is the longest key id.
const MaxKeyIDLength = 64

// magic starts every value sealed in the keyed format, followed by its version byte.
var magic = []byte("hsb")

// formatV1 is the version byte of the keyed format.
const formatV1 = 0x01

// NamedKey is a key and its id in a keyring.
type NamedKey struct {
	ID  string
	Key Key
}

// Keyring is the keys sealed values may be opened with: one active key, which seals, and older
// ones, which only open. The zero Keyring has no key: Seal and Open refuse it. It prints its
// key ids, never its keys.
type Keyring struct {
	active string
	keys   map[string]Key
	ids    []string // the active one first, then in the order given
}

// ValidKeyID reports whether id can name a key: 1 to 64 ASCII letters, digits, '.', '_' or '-'.
func ValidKeyID(id string) bool {
	if id == "" || len(id) > MaxKeyIDLength {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// KeyringOf is the keyring of one key, with id DefaultKeyID: what HOOKSTREAM_SECRET_KEY alone
// gives.
func KeyringOf(key Key) Keyring {
	if key.IsZero() {
		return Keyring{}
	}
	return Keyring{active: DefaultKeyID, keys: map[string]Key{DefaultKeyID: key}, ids: []string{DefaultKeyID}}
}

// NewKeyring makes a keyring of keys with active as the key that seals. An empty active names
// the only key when there is one. It refuses no keys, an invalid or repeated id, one key
// under two ids and an active id that is not among the keys; its errors name ids, never keys.
func NewKeyring(active string, keys []NamedKey) (Keyring, error) {
	if len(keys) == 0 {
		return Keyring{}, fmt.Errorf("%w: no keys", ErrInvalidKey)
	}
	r := Keyring{keys: make(map[string]Key, len(keys))}
	var given []string
	for i, nk := range keys {
		if !ValidKeyID(nk.ID) {
			// Not repeated: a key pasted where its id belongs must not reach a log.
			return Keyring{}, fmt.Errorf("%w: the id of key %d is not 1 to %d letters, digits, '.', '_' or '-'", ErrInvalidKey, i+1, MaxKeyIDLength)
		}
		if nk.Key.IsZero() {
			return Keyring{}, fmt.Errorf("%w: key id %q has no key", ErrInvalidKey, nk.ID)
		}
		if _, dup := r.keys[nk.ID]; dup {
			return Keyring{}, fmt.Errorf("%w: key id %q is given twice", ErrInvalidKey, nk.ID)
		}
		for _, id := range given {
			if r.keys[id].fingerprint == nk.Key.fingerprint {
				return Keyring{}, fmt.Errorf("%w: key ids %q and %q are the same key", ErrInvalidKey, id, nk.ID)
			}
		}
		r.keys[nk.ID] = nk.Key
		given = append(given, nk.ID)
	}
	switch {
	case active == "" && len(given) == 1:
		active = given[0]
	case active == "":
		return Keyring{}, fmt.Errorf("%w: %d keys (%s) and none named active", ErrInvalidKey, len(given), strings.Join(given, ", "))
	case r.keys[active].IsZero():
		return Keyring{}, fmt.Errorf("%w: the active key id %q is not among the keys (%s)", ErrInvalidKey, active, strings.Join(given, ", "))
	}
	r.active = active
	r.ids = append([]string{active}, slices.DeleteFunc(given, func(id string) bool { return id == active })...)
	return r, nil
}

// IsZero reports whether r holds no key.
func (r Keyring) IsZero() bool { return r.active == "" }

// Active is the id of the key that seals.
func (r Keyring) Active() string { return r.active }

// IDs are the ids of the keys, the active one first.
func (r Keyring) IDs() []string { return slices.Clone(r.ids) }

// String names the key ids, never the keys.
func (r Keyring) String() string {
	if r.IsZero() {
		return "secretbox.Keyring(none)"
	}
	return fmt.Sprintf("secretbox.Keyring(active %s; keys %s)", r.active, strings.Join(r.ids, ", "))
}

// GoString hides the keys from %#v too.
func (r Keyring) GoString() string { return r.String() }

// UnknownKeyError is a sealed value naming a key id the keyring does not hold. It matches
// ErrOpen and ErrUnknownKey.
type UnknownKeyError struct {
	ID   string   // the id the value names
	Have []string // the ids of the keyring
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("secretbox: cannot open sealed value: it was sealed under key id %q, which is not in the keyring (%s)",
		e.ID, strings.Join(e.Have, ", "))
}

// Is makes errors.Is(err, ErrOpen) and errors.Is(err, ErrUnknownKey) hold.
func (e *UnknownKeyError) Is(target error) bool { return target == ErrOpen || target == ErrUnknownKey }

// header is the part of a keyed value before its nonce: magic, version, id length, id.
func header(id string) []byte {
	h := make([]byte, 0, len(magic)+2+len(id))
	h = append(h, magic...)
	h = append(h, formatV1, byte(len(id)))
	return append(h, id...)
}

// KeyID returns the key id a value sealed in the keyed format names, and false for a value in
// the legacy format or one too short to be either. It reads the header only: that the value
// opens under that key is what Open checks.
func KeyID(sealed []byte) (string, bool) {
	id, _, ok := parseKeyed(sealed)
	return id, ok
}

// parseKeyed splits a keyed value into its key id and the rest (nonce, ciphertext, tag).
func parseKeyed(sealed []byte) (id string, rest []byte, ok bool) {
	n := len(magic)
	if len(sealed) < n+2 || string(sealed[:n]) != string(magic) || sealed[n] != formatV1 {
		return "", nil, false
	}
	l := int(sealed[n+1])
	if len(sealed) < n+2+l+NonceSize+TagSize {
		return "", nil, false
	}
	id = string(sealed[n+2 : n+2+l])
	if !ValidKeyID(id) {
		return "", nil, false
	}
	return id, sealed[n+2+l:], true
}

// Seal encrypts plaintext under the active key, bound to aad, in the keyed format: the
// header naming the active key id, a fresh random nonce, the ciphertext and tag. The header is
// authenticated with aad. Sealing the same plaintext twice gives different values.
func (r Keyring) Seal(plaintext, aad []byte) ([]byte, error) {
	if r.IsZero() {
		return nil, fmt.Errorf("%w: no key", ErrInvalidKey)
	}
	key := r.keys[r.active]
	h := header(r.active)
	out := make([]byte, len(h)+NonceSize, len(h)+NonceSize+len(plaintext)+TagSize)
	copy(out, h)
	nonce := out[len(h):]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secretbox: nonce: %w", err)
	}
	return key.aead.Seal(out, nonce, plaintext, additional(h, aad)), nil
}

// additional is the GCM additional data of a keyed value: its header, then the caller's aad.
func additional(h, aad []byte) []byte {
	return append(append(make([]byte, 0, len(h)+len(aad)), h...), aad...)
}

// Open decrypts a value made by Seal under any key of the keyring, or a value in the legacy
// format (no key id) made under any of them, with the same aad. Any change to the value, and
// any other key or aad, gives an error matching ErrOpen; a keyed value whose key id is not in
// the keyring gives an *UnknownKeyError naming the id.
func (r Keyring) Open(sealed, aad []byte) ([]byte, error) {
	plain, _, err := r.open(sealed, aad)
	return plain, err
}

// Reseal returns sealed as the active key would seal it: unchanged (and false) when it is in
// the keyed format under the active key already, else opened and sealed again (and true). A
// value that does not open is an error, as from Open.
func (r Keyring) Reseal(sealed, aad []byte) ([]byte, bool, error) {
	plain, current, err := r.open(sealed, aad)
	if err != nil {
		return nil, false, err
	}
	if current {
		return sealed, false, nil
	}
	out, err := r.Seal(plain, aad)
	return out, err == nil, err
}

// open opens sealed and reports whether it is in the keyed format under the active key.
//
// A legacy value is a random nonce, so 1 in 2^32 of them begins like a keyed value; such a value
// fails as keyed and is then tried as legacy. The keyed reading is tried first, and its error is
// the one returned when neither reading opens.
func (r Keyring) open(sealed, aad []byte) (plain []byte, current bool, err error) {
	if r.IsZero() {
		return nil, false, fmt.Errorf("%w: no key", ErrInvalidKey)
	}
	if id, rest, ok := parseKeyed(sealed); ok {
		key, known := r.keys[id]
		if known {
			h := sealed[:len(sealed)-len(rest)]
			if plain, oerr := key.aead.Open(nil, rest[:NonceSize], rest[NonceSize:], additional(h, aad)); oerr == nil {
				return plain, id == r.active, nil
			}
			err = fmt.Errorf("%w: authentication failed under key id %q (tampered, or wrong row)", ErrOpen, id)
		} else {
			err = &UnknownKeyError{ID: id, Have: r.IDs()}
		}
	}
	if len(sealed) >= LegacyOverhead {
		for _, id := range r.ids {
			if plain, oerr := r.keys[id].aead.Open(nil, sealed[:NonceSize], sealed[NonceSize:], aad); oerr == nil {
				return plain, false, nil
			}
		}
	}
	if err != nil {
		return nil, false, err
	}
	if len(sealed) < LegacyOverhead {
		return nil, false, fmt.Errorf("%w: %d bytes is shorter than nonce and tag", ErrOpen, len(sealed))
	}
	return nil, false, fmt.Errorf("%w: authentication failed under every key of the keyring (%s): tampered, another key or wrong row",
		ErrOpen, strings.Join(r.ids, ", "))
}

// ParseKeyList reads a list of keys as HOOKSTREAM_SECRET_KEYS or the file of
// HOOKSTREAM_SECRET_KEYS_FILE holds it: entries "id:base64key" separated by commas or new
// lines; white space around entries, empty entries and lines starting with '#' are ignored.
// Its errors name an entry by its position or its id, never repeat a key.
func ParseKeyList(s string) ([]NamedKey, error) {
	var out []NamedKey
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, entry := range strings.Split(line, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			n++
			id, b64, ok := strings.Cut(entry, ":")
			id = strings.TrimSpace(id)
			if !ok {
				return nil, fmt.Errorf("%w: entry %d is not id:base64key", ErrInvalidKey, n)
			}
			if !ValidKeyID(id) {
				return nil, fmt.Errorf("%w: the id of entry %d is not 1 to %d letters, digits, '.', '_' or '-'", ErrInvalidKey, n, MaxKeyIDLength)
			}
			k, err := ParseKey(b64)
			if err != nil {
				return nil, fmt.Errorf("key id %q: %w", id, err)
			}
			out = append(out, NamedKey{ID: id, Key: k})
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no entries; want id:base64key, separated by commas or new lines", ErrInvalidKey)
	}
	return out, nil
}
