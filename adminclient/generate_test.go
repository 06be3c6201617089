package adminclient_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The committed client is what oapi-codegen (the version go.mod names) makes of the current
// admin/openapi.json with oapi-codegen.yaml: a changed route, body or field fails here until the
// client is regenerated.
func TestGeneratedClientIsCurrent(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the generator: %v", err)
	}
	out := filepath.Join(t.TempDir(), "openapi.gen.go")
	cmd := exec.Command(goBin, "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", "-o", out, "../admin/openapi.json")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("openapi.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("openapi.gen.go is not what oapi-codegen makes of admin/openapi.json (run go generate ./adminclient, or make generate); first difference:\n%s",
			firstDifference(string(got), string(want)))
	}
}

// firstDifference is the first line where committed and generated differ, with its number.
func firstDifference(committed, generated string) string {
	a, b := strings.Split(committed, "\n"), strings.Split(generated, "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d\n  committed: %s\n  generated: %s", i+1, x, y)
		}
	}
	return "none"
}
