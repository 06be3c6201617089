package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// design.md section 12: the API commands take the admin URL, the token and the partner from the config file
// when no flag or variable gives them; a variable wins over the file, a flag over both; a file
// that others may read is refused, naming it, before anything is sent.
func TestConfigFile(t *testing.T) {
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	epA, _ := dev.createEndpoint(t, "pa", "http://127.0.0.1:1999/a", "customer.*")
	epB, _ := dev.createEndpoint(t, "pb", "http://127.0.0.1:1999/b", "customer.*")
	path := filepath.Join(t.TempDir(), "config")
	t.Setenv("HOOKSTREAM_CONFIG", path)
	write := func(mode os.FileMode, lines ...string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by the umask
			t.Fatal(err)
		}
	}
	noDevToken := t.TempDir() // no dev-admin-token here: the token can only come from the file
	list := func(wantStatus int, args ...string) (stdout, stderr string) {
		t.Helper()
		status, stdout, stderr := cli(t, append([]string{"endpoints", "list", "--data-dir", noDevToken}, args...)...)
		if status != wantStatus {
			t.Fatalf("endpoints list %s: status %d, want %d\n%s%s", strings.Join(args, " "), status, wantStatus, stdout, stderr)
		}
		return stdout, stderr
	}

	// Everything from the file: the URL, the operator token, the partner.
	write(0o600, "# hookstream", "admin_url = "+dev.adminURL, "admin_token = "+dev.token, `partner = "pa"`)
	if out, _ := list(0); !strings.Contains(out, epA) || strings.Contains(out, epB) {
		t.Fatalf("endpoints list from the file:\n%s", out)
	}
	// A flag wins over the file.
	if out, _ := list(0, "--partner", "pb"); !strings.Contains(out, epB) {
		t.Fatalf("endpoints list --partner pb:\n%s", out)
	}
	// Variables win over the file: its URL and token are wrong, the variables' right.
	write(0o600, "admin_url = http://127.0.0.1:1", "api_key = hsk_not_a_key", "partner = pa")
	if _, stderr := list(2); !strings.Contains(stderr, "127.0.0.1:1") {
		t.Fatalf("endpoints list with the file's wrong URL:\n%s", stderr)
	}
	t.Setenv("HOOKSTREAM_ADMIN_URL", dev.adminURL)
	if _, stderr := list(2); !strings.Contains(stderr, "401") {
		t.Fatalf("endpoints list with the file's wrong key:\n%s", stderr)
	}
	t.Setenv("HOOKSTREAM_ADMIN_TOKEN", dev.token)
	if out, _ := list(0); !strings.Contains(out, epA) {
		t.Fatalf("endpoints list with the variables over the file:\n%s", out)
	}

	// Readable by the group or others: refused, naming the file.
	for _, mode := range []os.FileMode{0o640, 0o604} {
		write(mode, "admin_token = "+dev.token)
		if _, stderr := list(2); !strings.Contains(stderr, "config file "+path) || !strings.Contains(stderr, "chmod 600") {
			t.Fatalf("a config file of mode %o:\n%s", mode, stderr)
		}
	}
	write(0o600, "admin_tokn = x")
	if _, stderr := list(2); !strings.Contains(stderr, path+":1: unknown key \"admin_tokn\"") {
		t.Fatalf("a config file with a misspelt key:\n%s", stderr)
	}
	// A file named by HOOKSTREAM_CONFIG must exist.
	t.Setenv("HOOKSTREAM_CONFIG", path+".missing")
	if _, stderr := list(2); !strings.Contains(stderr, path+".missing") {
		t.Fatalf("a missing config file:\n%s", stderr)
	}
}
