package testenv

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/secretbox"
)

// Logger is the logger a test gives the component under test: with -v, every record (debug
// ones too) as text on stderr, naming the test; without, nothing.
func Logger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Eventually checks cond every 10 ms until it holds, and fails t once timeout has passed
// without, saying what it waited for.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Poll checks cond every 10 ms until it holds (true) or timeout has passed (false).
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// SecretKey returns a fresh key for sealing endpoint secrets, as HOOKSTREAM_SECRET_KEY holds it
// (raw), and the keyring it alone makes (key id "default"), or fails t.
func SecretKey(t testing.TB) (raw string, keys secretbox.Keyring) {
	t.Helper()
	raw, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := secretbox.ParseKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return raw, secretbox.KeyringOf(key)
}
