package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README is the entry point and docs/ holds one page per room or concern. The tests here,
// with TestDocsConfigurationTable, TestDocsCommandsTable, TestDocsGettingStarted and
// TestDocsResellerCommands, hold what those pages state to the code: a command shown is one a
// test runs, a flag documented is one the binary has, a room listed is a folder.

// repoRoot is the repository, from this package's folder.
const repoRoot = "../.."

// docsSection is the text of the section of the file (relative to the repository) under the
// heading "## heading", up to the next heading of that level; with heading "", the whole file.
func docsSection(t *testing.T, file, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	if heading == "" {
		return string(raw)
	}
	_, section, ok := strings.Cut(string(raw), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("%s has no section ## %s", file, heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// docsShellBlock returns the last ```sh block of file that holds marker, and the path of curl,
// which those blocks call; it fails t when either is missing.
func docsShellBlock(t *testing.T, file, marker string) (script, curl string) {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("%s uses curl: %v", file, err)
	}
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(docsSection(t, file, ""), -1) {
		if strings.Contains(block[1], marker) {
			script = block[1]
		}
	}
	if script == "" {
		t.Fatalf("%s shows no %s", file, marker)
	}
	return script, curl
}

// runDocsScript runs a shell block of the docs with bash -euo pipefail, each key of replace in
// it (it must be there: a page that changed fails here) replaced by its value and env added to
// the environment, and returns its standard output; a failure fails t naming what it ran.
func runDocsScript(t *testing.T, what, script string, replace map[string]string, env ...string) []byte {
	t.Helper()
	for from, to := range replace {
		if !strings.Contains(script, from) {
			t.Fatalf("%s has no %q to replace:\n%s", what, from, script)
		}
		script = strings.ReplaceAll(script, from, to)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s's commands: %v\n%s\nstdout:\n%s\nstderr:\n%s", what, err, script, out, stderr.Bytes())
	}
	return out
}

// commandLines are the command lines that take flags: each command, or each of its subcommands.
func commandLines(t *testing.T) [][]string {
	t.Helper()
	var lines [][]string
	for _, c := range commands() {
		var subs []string
		switch c.name {
		case "endpoints":
			for _, sc := range endpointSubcommands {
				subs = append(subs, sc.name)
			}
		case "deliveries":
			for _, sc := range deliverySubcommands {
				subs = append(subs, sc.name)
			}
		case "secrets":
			subs = []string{"reseal"}
		case "topics":
			subs = []string{"create", "describe"}
			if _, out, _ := cli(t, "topics", "-h"); !strings.Contains(out, "topics create|describe") {
				t.Fatalf("topics has other subcommands than create and describe:\n%s", out)
			}
		}
		if subs == nil {
			lines = append(lines, []string{c.name})
		}
		for _, s := range subs {
			lines = append(lines, []string{c.name, s})
		}
	}
	return lines
}

// TestDocsCommandFlags holds the documented flags to the binary's, both ways. Every flag of every
// command and subcommand, as its -h lists it, is documented: a setting's in the configuration
// table of docs/configuration.md (TestDocsConfigurationTable holds its variable and default), a
// command's own in the table of docs/cli.md, in that command's row. Every flag either table
// names is one the binary has: the configuration table's are each read by some command, and a
// row of docs/cli.md names exactly the command's own flags.
func TestDocsCommandFlags(t *testing.T) {
	settings := map[string]bool{} // flag → documented in the configuration table
	for _, m := range regexp.MustCompile("(?m)^\\| `HOOKSTREAM_[A-Z0-9_]+` \\| `--([a-z0-9-]+)` \\|").
		FindAllStringSubmatch(docsSection(t, "docs/configuration.md", "Settings"), -1) {
		settings[m[1]] = true
	}
	own := map[string][]string{} // command line → its own flags, as docs/cli.md lists them
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z][a-z -]*)` \\| (.*) \\|$").
		FindAllStringSubmatch(docsSection(t, "docs/cli.md", "Each command's own flags"), -1) {
		var flags []string
		for _, f := range regexp.MustCompile("`--([a-z0-9-]+)").FindAllStringSubmatch(m[2], -1) {
			if !slices.Contains(flags, f[1]) {
				flags = append(flags, f[1])
			}
		}
		if _, dup := own[m[1]]; dup {
			t.Errorf("docs/cli.md lists the own flags of %s twice", m[1])
		}
		own[m[1]] = flags
	}
	if len(own) == 0 {
		t.Fatal("docs/cli.md's table of each command's own flags has no row")
	}

	read := map[string]bool{} // settings some command reads
	for _, line := range commandLines(t) {
		name := strings.Join(line, " ")
		var commandOwn []string
		_, flags := helpFlags(t, append(line, "-h")...)
		for _, f := range flags {
			if _, ok := variableOf(f); ok {
				read[f] = true
				if !settings[f] {
					t.Errorf("hookstream %s has --%s, which docs/configuration.md's table lacks", name, f)
				}
				continue
			}
			commandOwn = append(commandOwn, f)
		}
		documented := own[name]
		delete(own, name)
		lacking, extra := setDiff(documented, commandOwn)
		for _, f := range lacking {
			t.Errorf("hookstream %s has --%s, which its row in docs/cli.md (each command's own flags) lacks", name, f)
		}
		for _, f := range extra {
			t.Errorf("docs/cli.md gives hookstream %s the flag --%s, which it does not have", name, f)
		}
	}
	for name := range own {
		t.Errorf("docs/cli.md lists the own flags of %q, which is no command of the binary", name)
	}
	for f := range settings {
		if !read[f] {
			t.Errorf("docs/configuration.md lists --%s, which no command reads", f)
		}
	}
}

// TestREADMEEntryPoint: the README shows two commands, the quick start and the test command, and
// each is one a test or CI runs. `make test` is what .ci/run runs; `make dev` runs
// deploy/local/dev.sh, which deploy's TestDevScriptUsesDatabaseURL runs, and its next steps are
// docs/getting-started.md, which TestDocsGettingStarted runs.
func TestREADMEEntryPoint(t *testing.T) {
	want := map[string]string{"Quick start": "make dev", "Tests": "make test"}
	readme := docsSection(t, "README.md", "")
	blocks := regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(readme, -1)
	if len(blocks) != len(want) {
		t.Errorf("README.md shows %d blocks of code, want %d (the quick start and the test command); the rest belongs in docs/", len(blocks), len(want))
	}
	for heading, command := range want {
		if got := strings.TrimSpace(docsSection(t, "README.md", heading)); !strings.HasPrefix(got, "```sh\n"+command+"\n```") {
			t.Errorf("README.md's ## %s does not start with the command %s:\n%s", heading, command, got)
		}
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != want["Tests"] {
		t.Errorf(".ci/run ends with %q, the README's test command is %q", last, want["Tests"])
	}
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^dev:.*\n\t.*bash deploy/local/dev\.sh`).Match(makefile) {
		t.Error("make dev does not run deploy/local/dev.sh, the script deploy's tests run")
	}
}

// TestDocsLinks: every relative link of README.md, docs/*.md, docs/history/*.md and
// deploy/README.md leads to a file of the repository, and an anchor to a heading of that file.
func TestDocsLinks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	history, err := filepath.Glob(filepath.Join(repoRoot, "docs", "history", "*.md"))
	if err != nil || len(history) == 0 {
		t.Fatalf("docs/history holds no page (%v): the dated runs live there", err)
	}
	files = append(files, history...)
	files = append(files, filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "deploy", "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, file)
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				if _, statErr := os.Stat(dest); statErr == nil && anchor == "" {
					continue // a folder
				}
				t.Errorf("%s links to %s, which does not exist", name, target)
				continue
			}
			if anchor != "" && !slices.Contains(headingAnchors(string(body)), anchor) {
				t.Errorf("%s links to %s: no heading there has the anchor #%s", name, target, anchor)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown text: lower case,
// punctuation dropped, spaces as hyphens.
func headingAnchors(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(text, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestDocsRooms holds the room tables to the folders: the README's map of the rooms and the
// first table of docs/design.md section 3 list the same folders, one row each, and together
// every top-level folder holding Go code (a folder whose code is in a subfolder, as cmd, is
// listed by that subfolder); the second table of section 3 lists every folder of internal/.
func TestDocsRooms(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9/_-]+)` \\|")
	rows := func(text string) []string {
		var out []string
		for _, m := range row.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	readme := rows(docsSection(t, "README.md", "The rooms"))
	design := docsSection(t, "docs/design.md", "3. Packages (rooms)")
	tables := regexp.MustCompile(`\n\n\| folder \|`).Split(design, -1)
	if len(tables) != 3 {
		t.Fatalf("docs/design.md section 3 has %d tables with a folder column, want 2 (the rooms, internal/)", len(tables)-1)
	}
	rooms, internal := rows(tables[1]), rows(tables[2])

	var goRooms, goInternal []string
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "internal" && holdsGo(t, filepath.Join(repoRoot, e.Name())) {
			goRooms = append(goRooms, e.Name())
		}
	}
	entries, err = os.ReadDir(filepath.Join(repoRoot, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && holdsGo(t, filepath.Join(repoRoot, "internal", e.Name())) {
			goInternal = append(goInternal, "internal/"+e.Name())
		}
	}

	top := func(folders []string) []string {
		var out []string
		for _, f := range folders {
			out = append(out, strings.SplitN(f, "/", 2)[0])
		}
		return out
	}
	same := func(what string, got, want []string) {
		t.Helper()
		lacking, extra := setDiff(got, want)
		for _, f := range lacking {
			t.Errorf("%s lacks %s: add a row", what, f)
		}
		for _, f := range extra {
			t.Errorf("%s lists %s, which is no folder holding Go code", what, f)
		}
		for i, f := range got {
			if slices.Contains(got[:i], f) {
				t.Errorf("%s lists %s twice", what, f)
			}
		}
	}
	same("README.md's map of the rooms", top(readme), goRooms)
	same("docs/design.md section 3's room table", top(rooms), goRooms)
	same("docs/design.md section 3's table of internal/", internal, goInternal)
	if !slices.Equal(readme, rooms) {
		t.Errorf("README.md's map of the rooms lists %v, docs/design.md section 3 %v: the same folders in the same order", readme, rooms)
	}
}

// holdsGo says whether a folder or one below it holds a .go file.
func holdsGo(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// setDiff returns what want has and got lacks, and what got has beyond want.
func setDiff(got, want []string) (lacking, extra []string) {
	for _, f := range want {
		if !slices.Contains(got, f) {
			lacking = append(lacking, f)
		}
	}
	for _, f := range got {
		if !slices.Contains(want, f) {
			extra = append(extra, f)
		}
	}
	return lacking, extra
}
