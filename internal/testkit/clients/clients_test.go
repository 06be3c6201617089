//go:build clients

package clients_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// language is how one client's examples are run.
type language struct {
	name    string
	dir     string   // the working directory of the examples
	command []string // the interpreter and its arguments before the example
	// create, send and receive are the example files.
	create, send, receive string
}

// Each language's examples, as their READMEs tell a user to run them: create an endpoint for a
// receiver, start the receiver with the endpoint's secret, send a test event and read its
// delivery; the receiver must have verified that delivery with the Standard Webhooks library.
func TestClientExamples(t *testing.T) {
	repo := repoRoot(t)
	build := exec.Command("bash", filepath.Join(repo, "clients/clients.sh"), "build")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("clients/clients.sh build: %v\n%s", err, out)
	}
	out, err := exec.Command("bash", filepath.Join(repo, "clients/clients.sh"), "python").Output()
	if err != nil {
		t.Fatalf("clients/clients.sh python: %v", err)
	}
	python := strings.TrimSpace(string(out))
	dev := startDev(t)
	ctx := context.Background()
	res, err := dev.api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "acme"})
	if err := adminclient.Check(res, err); err != nil {
		t.Fatalf("create partner: %v", err)
	}

	for _, lang := range []language{
		{name: "typescript", dir: filepath.Join(repo, "clients/typescript"), command: []string{"node"},
			create: "dist/examples/create-endpoint.js", send: "dist/examples/send-test-event.js", receive: "dist/examples/receiver.js"},
		{name: "python", dir: filepath.Join(repo, "clients/python/examples"), command: []string{python},
			create: "create_endpoint.py", send: "send_test_event.py", receive: "receiver.py"},
	} {
		t.Run(lang.name, func(t *testing.T) {
			port := testenv.FreePort(t)
			receiverURL := fmt.Sprintf("http://127.0.0.1:%d/webhooks", port)
			created := lang.run(t, dev, lang.create, "acme", receiverURL)
			endpointID := assignment(t, created, "ENDPOINT_ID", `ep_[0-9A-Z]{26}`)
			secret := assignment(t, created, "WEBHOOK_SECRET", `whsec_[A-Za-z0-9+/=]+`)

			rx := lang.start(t, lang.receive, "WEBHOOK_SECRET="+secret, fmt.Sprint("PORT=", port))
			rx.waitFor(t, "listening on", 30*time.Second)
			refuseForged(t, receiverURL, rx)

			sent := lang.run(t, dev, lang.send, "acme", endpointID)
			m := regexp.MustCompile(`test event (evt_\w+) queued as delivery (dlv_\w+)`).FindStringSubmatch(sent)
			if m == nil {
				t.Fatalf("%s printed no queued test event:\n%s", lang.send, sent)
			}
			if !regexp.MustCompile(`(?m)^delivery ` + m[2] + ` of webhook\.test: succeeded after 1 attempt\(s\)$`).MatchString(sent) {
				t.Fatalf("%s did not read back a succeeded delivery:\n%s", lang.send, sent)
			}
			if !regexp.MustCompile(`(?m)^  attempt 1 \(test\): status 204, \d+ ms$`).MatchString(sent) {
				t.Fatalf("%s did not print the attempt answered 204:\n%s", lang.send, sent)
			}
			rx.waitFor(t, "verified "+m[1]+" webhook.test", 10*time.Second)

			// The API says the same as the example, read with the Go client.
			got, err := dev.api.GetDeliveryWithResponse(ctx, "acme", m[2])
			if err := adminclient.Check(got, err); err != nil {
				t.Fatal(err)
			}
			if d := got.JSON200; d.State != adminclient.DeliveryDetailStateSucceeded || d.EndpointID != endpointID || d.EventID != m[1] {
				t.Fatalf("the API has delivery %s as %s to %s of %s, the example as succeeded to %s of %s",
					m[2], d.State, d.EndpointID, d.EventID, endpointID, m[1])
			}
		})
	}
}

// refuseForged sends the receiver a request signed with another secret: a receiver that does not
// verify would accept it.
func refuseForged(t *testing.T, url string, rx *receiver) {
	t.Helper()
	body := `{"type":"webhook.test","timestamp":"2026-01-01T00:00:00Z","data":{}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", "msg_forged")
	req.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	req.Header.Set("webhook-signature", "v1,bm90IHRoZSBzaWduYXR1cmUgb2YgdGhpcyBib2R5IGF0IGFsbA==")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the receiver: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the receiver answered a forged signature with %d, want 400", resp.StatusCode)
	}
	rx.waitFor(t, "refused msg_forged", 10*time.Second)
}

// run runs an example to its end with the admin API's address and token, and returns its output;
// a failure fails t with the output.
func (l language) run(t *testing.T, dev *devInstance, example string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.command[0], append(append(l.command[1:], example), args...)...)
	cmd.Dir = l.dir
	cmd.Env = append(os.Environ(), "HOOKSTREAM_ADMIN_URL="+dev.adminURL, "HOOKSTREAM_ADMIN_TOKEN="+dev.token, "HOOKSTREAM_API_KEY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", l.name, example, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// assignment is the value of NAME=value in an example's output, which must match pattern.
func assignment(t *testing.T, out, name, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `=(` + pattern + `)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s=%s line in:\n%s", name, pattern, out)
	}
	return m[1]
}

// receiver is a receiving example running until the test ends, its output kept.
type receiver struct {
	mu    sync.Mutex
	lines []string
}

// start runs a receiving example with env added to the environment until the test ends.
func (l language) start(t *testing.T, example string, env ...string) *receiver {
	t.Helper()
	cmd := exec.Command(l.command[0], append(l.command[1:], example)...)
	cmd.Dir = l.dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s %s: %v", l.name, example, err)
	}
	rx := &receiver{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			rx.mu.Lock()
			rx.lines = append(rx.lines, sc.Text())
			rx.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	return rx
}

// waitFor waits until the receiver printed a line starting with prefix.
func (rx *receiver) waitFor(t *testing.T, prefix string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		rx.mu.Lock()
		lines := strings.Join(rx.lines, "\n")
		rx.mu.Unlock()
		if regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix)).MatchString(lines) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver printed no %q within %s; it printed:\n%s", prefix, timeout, lines)
		}
	}
}

// devInstance is `hookstream dev` running as a child process on a database of its own.
type devInstance struct {
	adminURL, token string
	api             *adminclient.ClientWithResponses
}

func startDev(t *testing.T) *devInstance {
	t.Helper()
	db := testenv.NewEmptyDatabase(t)
	dataDir := t.TempDir()
	adminAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := testenv.StartProcess(t, "dev",
		"--database-url", db.URL, "--admin-addr", adminAddr,
		"--reseller-addr", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)),
		"--dev-kafka-port", fmt.Sprint(testenv.FreePort(t)), "--data-dir", dataDir,
		"--topic-partitions", "2", "--cdc-slot", db.Name, "--log-format", "text")
	t.Cleanup(func() {
		if _, err := p.Terminate(60 * time.Second); err != nil {
			t.Errorf("dev: %v\n%s", err, p.LogTail())
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get("http://" + adminAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if p.Exited() {
			t.Fatalf("dev exited:\n%s", p.LogTail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev not ready after 90 s:\n%s", p.LogTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	testenv.WaitSlotStreaming(t, db.Pool, db.Name, time.Until(deadline))
	token, err := os.ReadFile(filepath.Join(dataDir, "dev-admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	d := &devInstance{adminURL: "http://" + adminAddr, token: strings.TrimSpace(string(token))}
	if d.api, err = adminclient.New(d.adminURL, d.token); err != nil {
		t.Fatal(err)
	}
	return d
}

func repoRoot(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
