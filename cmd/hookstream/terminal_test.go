package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want, text string }{
		{"plain https://x.example/in?a=1", "plain https://x.example/in?a=1", "plain https://x.example/in?a=1"},
		{"\x1b]0;PWNED\x07", `\x1b]0;PWNED\x07`, `\x1b]0;PWNED\x07`},
		{"a\tb\nc\rd", `a\x09b\x0ac\x0dd`, "a\tb\nc\\x0dd"},
		{"del\x7f c1\u009b31m nel\u0085", `del\x7f c1\u009b31m nel\u0085`, `del\x7f c1\u009b31m nel\u0085`},
		{"abc\u202edef \u2066x\u2069 \u200e\u200f\u061c", `abc\u202edef \u2066x\u2069 \u200e\u200f\u061c`, `abc\u202edef \u2066x\u2069 \u200e\u200f\u061c`},
		{"bad \xff utf-8, é stays", `bad \xff utf-8, é stays`, `bad \xff utf-8, é stays`},
	} {
		if got := printable(c.in); got != c.want {
			t.Errorf("printable(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := printableText(c.in); got != c.text {
			t.Errorf("printableText(%q) = %q, want %q", c.in, got, c.text)
		}
	}
	in := []byte(`{"a":"x` + "\u202e\u0085\x7f" + `y","b":"\u202e"}`)
	out := printableJSON(in)
	var a, b map[string]string
	if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil || a["a"] != b["a"] || a["b"] != b["b"] {
		t.Fatalf("printableJSON changed the JSON's meaning: %s -> %s", in, out)
	}
	if strings.ContainsAny(string(out), "\u202e\u0085\x7f") {
		t.Fatalf("printableJSON left a control character raw: %q", out)
	}
}

// A partner writes an endpoint's description and disable reason; an operator reads them with
// `hookstream endpoints`: escape sequences and bidi controls in them reach the terminal escaped,
// in tables and in JSON, where they are the same strings to a JSON parser.
func TestEndpointsCommandEscapesPartnerText(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDatabase(t)
	dev := startDev(t, db)
	ctx := context.Background()
	const (
		description = "billing \x1b]0;PWNED\x07\x1b[2J\u202etxt.exe"
		reason      = "moved\x1b[8m hidden\u0085\u2066"
	)
	res, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pe"})
	must(t, "create partner", res, err)
	ep, err := dev.api.CreateEndpointWithResponse(ctx, "pe", adminclient.EndpointCreate{URL: "http://127.0.0.1:1999/none",
		EventTypes: []string{"*"}, Description: ptr(description)})
	must(t, "create endpoint", ep, err)
	dis, err := dev.api.DisableEndpointWithResponse(ctx, "pe", ep.JSON201.ID, adminclient.Disable{Reason: reason})
	must(t, "disable endpoint", dis, err)

	hs := func(args ...string) string {
		t.Helper()
		args = append(args, "--admin-url", dev.adminURL, "--data-dir", dev.dataDir, "--partner", "pe")
		status, stdout, stderr := cli(t, args...)
		if status != 0 {
			t.Fatalf("hookstream %s: status %d\n%s%s", strings.Join(args, " "), status, stdout, stderr)
		}
		return stdout
	}
	raw := "\x1b\x07\u202e\u0085\u2066"
	table := hs("endpoints", "get", ep.JSON201.ID)
	if strings.ContainsAny(table, raw) {
		t.Fatalf("endpoints get printed a control character raw: %q", table)
	}
	if !strings.Contains(table, `billing \x1b]0;PWNED\x07\x1b[2J\u202etxt.exe`) || !strings.Contains(table, `moved\x1b[8m hidden\u0085\u2066`) {
		t.Fatalf("endpoints get does not show the partner's text escaped:\n%s", table)
	}
	js := hs("endpoints", "get", ep.JSON201.ID, "--output", "json")
	if strings.ContainsAny(js, raw) {
		t.Fatalf("endpoints get --output json printed a control character raw: %q", js)
	}
	var got adminclient.Endpoint
	if err := json.Unmarshal([]byte(js), &got); err != nil || got.Description != description || got.DisabledReason == nil || *got.DisabledReason != reason {
		t.Fatalf("endpoints get --output json is not the endpoint's JSON (%v): %s", err, js)
	}
	if list := hs("endpoints", "list"); !strings.Contains(list, ep.JSON201.ID) {
		t.Fatalf("endpoints list:\n%s", list)
	}
}
