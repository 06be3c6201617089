package testenv

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

//go:embed node/verify_v1a.js
var nodeVerifyV1a []byte

// SignedMessage is one received webhook: its headers and its raw body.
type SignedMessage struct {
	Header http.Header
	Body   []byte
}

// NodeVerifyV1a checks Standard Webhooks v1a (ed25519) signatures with an independent verifier
// written in JavaScript from the specification (node/verify_v1a.js), run by Node.js: no code is
// shared with package webhook. It returns, per message, nil when a v1a signature verifies under
// one of publicKeys ("whpk_…") at now within tolerance, else an error with Node's reason. Node.js
// (18 or later, for ed25519 in crypto.verify) is on every machine that runs the tests; without
// it the test fails, naming it.
func NodeVerifyV1a(t testing.TB, publicKeys []string, now time.Time, tolerance time.Duration, msgs ...SignedMessage) []error {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("Node.js (node) is not installed (%v): the v1a interoperability check runs an independent verifier in it; install Node.js 18 or later (Debian: apt-get install nodejs)", err)
	}
	script := filepath.Join(t.TempDir(), "verify_v1a.js")
	if err := os.WriteFile(script, nodeVerifyV1a, 0o600); err != nil {
		t.Fatal(err)
	}
	type message struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	in := struct {
		Now        int64     `json:"now"`
		Tolerance  int64     `json:"tolerance"`
		PublicKeys []string  `json:"public_keys"`
		Messages   []message `json:"messages"`
	}{now.Unix(), int64(tolerance / time.Second), publicKeys, make([]message, len(msgs))}
	for i, m := range msgs {
		h := map[string]string{}
		for name, values := range m.Header {
			h[name] = strings.Join(values, " ")
		}
		in.Messages[i] = message{Headers: h, Body: base64.StdEncoding.EncodeToString(m.Body)}
	}
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	var answers []string
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(msgs) {
		t.Fatalf("node answered %q for %d messages (%v)", out, len(msgs), err)
	}
	errs := make([]error, len(msgs))
	for i, a := range answers {
		if a != "ok" {
			errs[i] = errors.New("node: " + a)
		}
	}
	return errs
}
