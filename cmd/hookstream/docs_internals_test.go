package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// internalCitation matches what only a reader of the repository can follow: a section of
// docs/design.md, a requirement id, a tracker number. Partners and operators read the console and
// the OpenAPI document, and get plain words instead.
var internalCitation = regexp.MustCompile(`(?i:design\.md)|\bR[0-9]+\b|` + trackerNumber.String())

// trackerNumber matches a reference to a tracker item by number. The pattern is put together
// from pieces so that this file does not match it.
var trackerNumber = regexp.MustCompile(`(?i)\b` + "is" + `sues? #?[0-9]`)

// TestDocsUserFacingTextCitesNoInternals: the console's templates, the strings of its code (page
// text, error messages, help) and every description, summary and title of admin/openapi.json
// cite no design section, requirement id or tracker number.
func TestDocsUserFacingTextCitesNoInternals(t *testing.T) {
	templates, err := filepath.Glob(filepath.Join(repoRoot, "console", "templates", "*"))
	if err != nil || len(templates) == 0 {
		t.Fatalf("console templates: %v (%d files)", err, len(templates))
	}
	for _, file := range templates {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, file)
		for i, line := range strings.Split(string(raw), "\n") {
			if m := internalCitation.FindString(line); m != "" {
				t.Errorf("%s:%d shows users %q: say what it does for them instead", name, i+1, m)
			}
		}
	}

	code, err := filepath.Glob(filepath.Join(repoRoot, "console", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	literals := 0
	for _, file := range code {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			literals++
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
			}
			if m := internalCitation.FindString(s); m != "" {
				t.Errorf("%s: the console's text %q cites %q", fset.Position(lit.Pos()), s, m)
			}
			return true
		})
	}
	if literals == 0 {
		t.Fatal("found no string in the console's code")
	}

	raw, err := os.ReadFile(filepath.Join(repoRoot, "admin", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	texts := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if s, ok := child.(string); ok && (k == "description" || k == "summary" || k == "title") {
					texts++
					if m := internalCitation.FindString(s); m != "" {
						t.Errorf("admin/openapi.json %s/%s cites %q: %s", path, k, m, s)
					}
				}
				walk(path+"/"+k, child)
			}
		case []any:
			for i, child := range v {
				walk(path+"/"+strconv.Itoa(i), child)
			}
		}
	}
	walk("", doc)
	if texts < 100 {
		t.Fatalf("admin/openapi.json has %d descriptions, summaries and titles; the walk is broken", texts)
	}
}

// TestDocsNoTrackerNumbers: no tracked text file (code, SQL, JSON, Markdown, YAML, shell,
// templates) cites a tracker item by number, which no reader of the repository can follow;
// requirement ids (R12) and design sections say where a rule comes from.
func TestDocsNoTrackerNumbers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files lists %d files; want the repository", len(files))
	}
	for _, name := range files {
		raw, err := os.ReadFile(filepath.Join(repoRoot, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(raw, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if m := trackerNumber.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q: cite the requirement id or design section it stands for", name, i+1, m)
			}
		}
	}
}
