package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package puts the browser (`make chromium` installs it).
const ChromiumPath = "/usr/bin/chromium"

// NewBrowser starts headless Chromium with a fresh profile for the test and returns a chromedp
// context of its first tab; the browser stops when the test ends. A machine without Chromium
// fails the test naming the make target that installs it.
func NewBrowser(t testing.TB) context.Context {
	t.Helper()
	path := ChromiumPath
	if p := os.Getenv("HOOKSTREAM_TEST_CHROMIUM"); p != "" {
		path = p
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("no Chromium at %s (%v): run `make chromium` (Debian's chromium package), or run everything with `make test`", path, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // root in a container: Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so a browser that cannot start fails here with its reason. (No
	// timeout on this first call: its context's end would stop the browser; the test's own
	// timeout bounds it.)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// ScreenshotDir is where browser tests write their screenshots: .data/console under the data
// directory (HOOKSTREAM_DATA_DIR, default .data at the repository root), created if missing.
func ScreenshotDir(t testing.TB, name string) string {
	t.Helper()
	base := os.Getenv("HOOKSTREAM_DATA_DIR")
	if base == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		base = filepath.Join(root, ".data")
	} else if !filepath.IsAbs(base) {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		base = filepath.Join(root, base)
	}
	dir := filepath.Join(base, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
