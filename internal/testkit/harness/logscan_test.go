package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scan finds every *.log file holding the text, counts its lines and keeps the first; other
// files, other lines and a missing directory hold none.
func TestFindInLogs(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 200<<10) // longer than a read buffer
	files := map[string]string{
		"recorder-1.log": `{"msg":"starting"}` + "\n" +
			`{"msg":"batch not stored; trying it again","err":"recorder: record attempts: deliveries: ERROR: deadlock detected (SQLSTATE 40P01)"}` + "\n" +
			long + "\n" +
			long + `deadlock detected` + "\n" +
			`{"msg":"pending rows not stored; trying it again","err":"ERROR: deadlock detected (SQLSTATE 40P01)"}`, // no final newline
		"sender-1.log":  `{"msg":"deadlock"}` + "\n" + `{"msg":"detected"}` + "\n",
		"services.log":  "2026-12-04 ERROR:  deadlock detected\r\n",
		"timeline.csv":  "deadlock detected\n",
		"empty.log":     "",
		"sub/inner.log": "deadlock detected\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FindInLogs(dir, DeadlockDetected)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("matches %v, want recorder-1.log and services.log", got)
	}
	rec, svc := got[0], got[1]
	if rec.Path != filepath.Join(dir, "recorder-1.log") || rec.Lines != 3 || !strings.Contains(rec.First, "batch not stored") {
		t.Errorf("recorder-1.log: %+v, want 3 lines, the first the batch's", rec)
	}
	if svc.Path != filepath.Join(dir, "services.log") || svc.Lines != 1 || svc.First != "2026-12-04 ERROR:  deadlock detected" {
		t.Errorf("services.log: %+v", svc)
	}
	if s := rec.String(); !strings.Contains(s, "recorder-1.log: 3 lines, the first: ") || len(s) > len(rec.Path)+340 {
		t.Errorf("String() = %q", s)
	}

	none, err := FindInLogs(filepath.Join(dir, "absent"), DeadlockDetected)
	if err != nil || len(none) != 0 {
		t.Errorf("missing directory: %v, %v; want none", none, err)
	}
}
