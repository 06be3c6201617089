package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binaryOnce sync.Once
	binaryDir  string
	binaryErr  error
)

// Binary builds the hookstream command once per test process and returns its path, for tests
// that run components as child processes (and kill them with SIGKILL). Call CleanupBinary from
// TestMain to remove it.
func Binary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			binaryErr = err
			return
		}
		if binaryDir, err = os.MkdirTemp("", "hookstream-bin-"); err != nil {
			binaryErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binaryDir, "hookstream"), "./cmd/hookstream")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("testenv: %v", binaryErr)
	}
	return filepath.Join(binaryDir, "hookstream")
}

// CleanupBinary removes the binary Binary built, if any.
func CleanupBinary() {
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
}
