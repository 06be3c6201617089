package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

const guideFile = "docs/getting-started.md"

// guideBlock is one ```sh block of the guide: its command lines (comments and blank lines
// left out), and whether it keeps running in a terminal of its own.
type guideBlock struct {
	script     string
	commands   []string
	background bool
}

// guideBlocks are the guide's ```sh blocks, in order. A block whose first line starts with
// "# in another terminal" is a long-running command: it holds exactly one.
func guideBlocks(t *testing.T) []guideBlock {
	t.Helper()
	var blocks []guideBlock
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(docsSection(t, guideFile, ""), -1) {
		b := guideBlock{script: m[1], background: strings.HasPrefix(m[1], "# in another terminal")}
		for _, line := range strings.Split(m[1], "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				b.commands = append(b.commands, line)
			}
		}
		if len(b.commands) == 0 {
			t.Fatalf("%s has a sh block with no command:\n%s", guideFile, m[1])
		}
		if b.background && len(b.commands) != 1 {
			t.Fatalf("%s: a block run in another terminal holds one command, not %d:\n%s", guideFile, len(b.commands), m[1])
		}
		if strings.Contains(m[1], "go run") {
			t.Errorf("%s runs `go run` (it exits 1 for every failure): use bin/hookstream of make build:\n%s", guideFile, m[1])
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		t.Fatalf("%s has no sh block", guideFile)
	}
	return blocks
}

// guideReady is, by subcommand, what a long-running command of the guide prints once it is
// ready for the next block.
var guideReady = map[string]string{"receive": "Receiving on", "listen": "connected"}

// makeRecipe is the recipe of target in the Makefile, one command a line.
func makeRecipe(t *testing.T, target string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + target + `:.*\n((?:\t.*\n)+)`).FindStringSubmatch(docsSection(t, "Makefile", ""))
	if m == nil {
		t.Fatalf("the Makefile has no target %s with a recipe", target)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(m[1]), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// docs/getting-started.md as a newcomer runs it, top to bottom: every ```sh block in order,
// `make dev` as a real `hookstream dev` (in this process, on a fresh database and data folder),
// `make build` as the built binary and `make seed` as its recipe in the Makefile; the blocks of
// another terminal (the receiver, listen) as processes that keep running. Every command must
// succeed; then the receiver must have printed each triggered event as verified, and each
// long-running command must stop on Ctrl-C (SIGINT) with status 0. What a user types in place
// of a placeholder (whsec_…, ep_…) is the last value of that kind an earlier command printed.
func TestDocsGettingStarted(t *testing.T) {
	t.Parallel()
	blocks := guideBlocks(t)
	if got := makeRecipe(t, "build"); !strings.Contains(strings.Join(got, "\n"), "-o bin/hookstream ./cmd/hookstream") {
		t.Fatalf("make build no longer builds bin/hookstream: %q", got)
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("the guide uses curl: %v", err)
	}
	bin := testenv.Binary(t)
	db := testenv.NewEmptyDatabase(t)
	var app received // the local app listen forwards to
	appSrv := httptest.NewServer(app.handler(func(int) int { return http.StatusOK }))
	defer appSrv.Close()
	rxPort := fmt.Sprint(testenv.FreePort(t))
	workDir, home := t.TempDir(), t.TempDir() // no developer's config file, nothing written to the repository

	var (
		dev      *devInstance
		built    bool
		printed  strings.Builder // every output so far: where placeholders find their values
		triggers []string        // the event ids the trigger commands printed
		running  []*guideProcess
	)
	env := func() []string {
		var e []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "HOOKSTREAM_") && !strings.HasPrefix(kv, "HOME=") {
				e = append(e, kv)
			}
		}
		return append(e, "HOME="+home, "HOOKSTREAM_DATABASE_URL="+db.URL, "HOOKSTREAM_ADMIN_URL="+dev.adminURL,
			"HOOKSTREAM_DATA_DIR="+dev.dataDir, "HOOKSTREAM_RESELLER_ADDR="+dev.resellerAddr)
	}
	placeholders := map[string]*regexp.Regexp{
		"whsec_…": regexp.MustCompile(`whsec_[A-Za-z0-9+/]+=*`),
		"ep_…":    regexp.MustCompile(`\bep_[0-9A-Za-z]+`),
	}
	// resolve puts this run's addresses, folders and binary, and the placeholders' values, in
	// place of the guide's.
	resolve := func(script string) string {
		script = strings.NewReplacer(
			"bin/hookstream", bin,
			"localhost:8080", strings.TrimPrefix(dev.adminURL, "http://"),
			".data/", dev.dataDir+"/",
			"127.0.0.1:9000", "127.0.0.1:"+rxPort,
			"--port 9000", "--port "+rxPort,
			"http://localhost:3000", appSrv.URL,
			"curl ", curl+" ",
		).Replace(script)
		for ph, re := range placeholders {
			if !strings.Contains(script, ph) {
				continue
			}
			all := re.FindAllString(printed.String(), -1)
			if len(all) == 0 {
				t.Fatalf("%s shows %s before a command printed one:\n%s", guideFile, ph, script)
			}
			script = strings.ReplaceAll(script, ph, all[len(all)-1])
		}
		if strings.Contains(script, "…") {
			t.Fatalf("%s: a block holds a placeholder the test does not know:\n%s", guideFile, script)
		}
		return script
	}
	runScript := func(what, script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = workDir, env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %s failed: %v\n%s\noutput:\n%s", guideFile, what, err, script, out)
		}
		t.Logf("%s\n%s", what, out)
		printed.Write(out)
		return string(out)
	}
	seeded := false
	seed := func() {
		t.Helper()
		runScript("make seed", resolve(strings.Join(makeRecipe(t, "seed"), "\n")))
		seeded = true
	}

	for _, b := range blocks {
		switch first := b.commands[0]; {
		case first == "make build":
			built = true
		case first == "make dev":
			if !b.background || !built {
				t.Fatalf("%s: make dev runs in another terminal, after make build", guideFile)
			}
			dev = startDev(t, db)
		case first == "make seed":
			seed()
		case strings.HasPrefix(first, "make "):
			t.Fatalf("%s runs %q, which this test does not know", guideFile, first)
		default:
			if dev == nil {
				t.Fatalf("%s runs %q before make dev", guideFile, first)
			}
			if !seeded {
				seed() // the state of a deployment after make seed: a partner besides the guide's
			}
			script := resolve(b.script)
			if !b.background {
				out := runScript(first, script)
				if strings.Contains(b.script, "hookstream trigger") {
					triggers = append(triggers, regexp.MustCompile(`\bevt_[0-9A-Za-z]+`).FindAllString(out, -1)...)
				}
				continue
			}
			running = append(running, startGuideProcess(t, first, resolve(b.commands[0]), workDir, env()))
		}
	}

	var rx *guideProcess
	for _, p := range running {
		if p.sub == "receive" {
			rx = p
		}
	}
	if rx == nil || len(triggers) == 0 {
		t.Fatalf("%s starts no receiver (%v) or triggers no event (%v)", guideFile, rx != nil, triggers)
	}
	for _, id := range triggers {
		if !rx.waitFor(regexp.MustCompile(`verified  \S+ +`+id+` `), 60*time.Second) {
			t.Errorf("the receiver printed no verified %s in 60s:\n%s", id, rx.out.String())
		}
	}
	for _, p := range running {
		p.interrupt(t)
		t.Logf("%s (in another terminal)\n%s", p.line, p.out.String())
	}
}

// guideProcess is a long-running command of the guide, in its other terminal.
type guideProcess struct {
	line, sub string
	cmd       *exec.Cmd
	out       testenv.Buffer
	done      chan error
}

// startGuideProcess starts the command line (its hookstream subcommand names what it prints
// when ready) and waits until it is ready.
func startGuideProcess(t *testing.T, line, resolved, dir string, env []string) *guideProcess {
	t.Helper()
	fields := strings.Fields(line)
	if len(fields) < 2 || fields[0] != "bin/hookstream" || guideReady[fields[1]] == "" {
		t.Fatalf("%s runs %q in another terminal: the test knows when bin/hookstream %v is ready, no more", guideFile, line, slices.Sorted(maps.Keys(guideReady)))
	}
	p := &guideProcess{line: line, sub: fields[1], done: make(chan error, 1)}
	// exec: the signal of Ctrl-C reaches hookstream itself, as in a terminal.
	p.cmd = exec.Command("bash", "-c", "exec "+resolved)
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() }) // after interrupt: an error, ignored
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.out.String(), guideReady[p.sub]) {
		select {
		case err := <-p.done:
			t.Fatalf("%s: %q exited: %v\n%s", guideFile, line, err, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q not ready (%q) in 30s:\n%s", guideFile, line, guideReady[p.sub], p.out.String())
		}
	}
	return p
}

func (p *guideProcess) waitFor(re *regexp.Regexp, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if re.MatchString(p.out.String()) {
			return true
		}
	}
	return false
}

// interrupt is Ctrl-C: the command must stop with status 0.
func (p *guideProcess) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Errorf("%q: %v", p.line, err)
		return
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("%q after Ctrl-C: %v, want status 0\n%s", p.line, err, p.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%q still runs 30s after Ctrl-C", p.line)
	}
}
