package main

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookstream/hookstream/adminclient"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/webhook"
)

// rotationReceiver is one endpoint's receiver: it verifies every request with the signing secret
// and the authentication header value the endpoint was given at creation, and nothing else.
type rotationReceiver struct {
	verifier   *webhook.Verifier
	authValue  string
	mu         sync.Mutex
	got        map[string]bool // webhook-ids verified
	refused    atomic.Int64
	lastRefuse atomic.Value // string
}

func (rx *rotationReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := rx.verifier.VerifyHeader(r.Header, body); err != nil {
		rx.refused.Add(1)
		rx.lastRefuse.Store(err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if rx.authValue != "" && r.Header.Get("X-Receiver-Key") != rx.authValue {
		rx.refused.Add(1)
		rx.lastRefuse.Store("wrong X-Receiver-Key")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rx.mu.Lock()
	rx.got[r.Header.Get("webhook-id")] = true
	rx.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rx *rotationReceiver) has(id string) bool {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.got[id]
}

// The master key is rotated under load by the procedure of docs/operations.md (Rotating the
// secret key): endpoints deliver continuously through cdc, fanout and the sender while a new key
// is added as active beside the old one, the admin API and the sender are rolled out, `secrets
// reseal` runs, the old key is removed and both are rolled out again. Every endpoint keeps
// delivering, signed with the secret its receiver was given at creation; every stored secret
// ends sealed under the new key id and opens with the new key alone; nothing fails to open.
func TestSecretKeyRotationUnderLoad(t *testing.T) {
	t.Parallel()
	db := testenv.NewDatabase(t)
	k := testenv.NewKafka(t)
	k.CreateTopics(t)
	oldRaw, _ := testenv.SecretKey(t)
	newRaw, _ := testenv.SecretKey(t)
	newKey, err := secretbox.ParseKey(newRaw)
	if err != nil {
		t.Fatal(err)
	}
	token := "rotation-operator-token-" + fmt.Sprint(time.Now().UnixNano())
	adminAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))

	const endpoints = 4
	receivers := make([]*rotationReceiver, endpoints)
	var ports []string
	urls := make([]string, endpoints)
	for i := range receivers {
		receivers[i] = &rotationReceiver{got: map[string]bool{}}
		srv := httptest.NewServer(receivers[i])
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		ports = append(ports, u.Port())
		urls[i] = srv.URL + "/hooks"
	}
	common := []string{"--kafka-brokers", strings.Join(k.Brokers, ","), "--topic-prefix", k.Prefix, "--metrics-addr", "", "--log-format", "text"}
	egress := []string{"--allow-http", "--egress-allow-cidrs", "127.0.0.0/8", "--egress-allow-ports", strings.Join(ports, ",")}
	keysOld := []string{"--secret-key", oldRaw}
	keysBoth := []string{"--secret-key", oldRaw, "--secret-keys", "k2:" + newRaw, "--secret-key-active", "k2"}
	keysNew := []string{"--secret-keys", "k2:" + newRaw}

	var cmdArgs = func(cmd string, parts ...[]string) []string {
		out := []string{cmd}
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	testenv.StartProcess(t, cmdArgs("cdc", common, []string{"--database-url", db.URL, "--cdc-slot", db.Name})...)
	testenv.StartProcess(t, cmdArgs("fanout", common, []string{"--instance-id", "fanout-0"})...)
	startSender := func(keys []string) *testenv.Process {
		return testenv.StartProcess(t, cmdArgs("sender", common, egress, keys, []string{"--instance-id", "sender-0", "--retry-schedule", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"})...)
	}
	startAdmin := func(keys []string) *testenv.Process {
		p := testenv.StartProcess(t, cmdArgs("admin", []string{"--kafka-brokers", strings.Join(k.Brokers, ","), "--topic-prefix", k.Prefix,
			"--log-format", "text", "--database-url", db.URL, "--admin-addr", adminAddr, "--admin-token", token}, egress, keys)...)
		testenv.Eventually(t, time.Minute, "admin ready", func() bool {
			resp, err := http.Get("http://" + adminAddr + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		return p
	}
	roll := func(p *testenv.Process, start func([]string) *testenv.Process, keys []string) *testenv.Process {
		if _, err := p.Terminate(40 * time.Second); err != nil {
			t.Fatal(err)
		}
		return start(keys)
	}
	sender := startSender(keysOld)
	admin := startAdmin(keysOld)
	testenv.WaitSlotStreaming(t, db.Pool, db.Name, time.Minute)

	api, err := adminclient.New("http://"+adminAddr, token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	created, err := api.CreatePartnerWithResponse(ctx, adminclient.PartnerCreate{ID: "pa"})
	must(t, "create partner", created, err)
	for i := range receivers {
		body := map[string]any{"url": urls[i], "event_types": []string{"customer.*"}}
		if i%2 == 1 { // every other endpoint authenticates to its receiver with a sealed header value
			receivers[i].authValue = fmt.Sprintf("receiver-key-%d-%d", i, time.Now().UnixNano())
			body["auth"] = map[string]any{"type": "header", "header_name": "X-Receiver-Key", "value": receivers[i].authValue}
		}
		b, _ := json.Marshal(body)
		res, err := api.CreateEndpointWithBodyWithResponse(ctx, "pa", "application/json", bytes.NewReader(b))
		must(t, "create endpoint", res, err)
		if receivers[i].verifier, err = webhook.NewVerifier([]string{res.JSON201.Secret}); err != nil {
			t.Fatal(err)
		}
	}
	// Values sealed by the previous release (no key id) are opened too: one secret row is
	// rewritten in the legacy format under the old key, as a database from before key ids holds it.
	writeLegacySecret(t, db, oldRaw)

	// The load: an event every 25 ms, to every endpoint, until the test says stop.
	var (
		eventsMu sync.Mutex
		events   []string
	)
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
			id := appendEvent(t, db, "pa", "customer.created")
			eventsMu.Lock()
			events = append(events, id)
			eventsMu.Unlock()
		}
	}()
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-loadDone
	}
	t.Cleanup(stopLoad)
	delivered := func(n int) func() bool {
		return func() bool {
			eventsMu.Lock()
			ids := append([]string(nil), events...)
			eventsMu.Unlock()
			if len(ids) < n {
				return false
			}
			for _, rx := range receivers {
				for _, id := range ids[:n] {
					if !rx.has(id) {
						return false
					}
				}
			}
			return true
		}
	}
	phase := func(what string) {
		t.Helper()
		eventsMu.Lock()
		n := len(events)
		eventsMu.Unlock()
		testenv.Eventually(t, 2*time.Minute, what+": every endpoint received every event so far", delivered(n+10))
	}
	phase("before the rotation")

	// 1-2: the new key active beside the old; senders first, then admin.
	sender = roll(sender, startSender, keysBoth)
	admin = roll(admin, startAdmin, keysBoth)
	phase("with both keys")

	// 3: reseal, twice: the second finds everything current.
	out, err := runCLI(t, cmdArgs("secrets", []string{"reseal", "--database-url", db.URL, "--cdc-slot", db.Name, "--batch", "2"}, keysBoth)...)
	if err != nil {
		t.Fatalf("secrets reseal: %v\n%s", err, out)
	}
	t.Logf("first reseal:\n%s", out)
	for _, want := range []string{fmt.Sprintf("signing secrets:        %d resealed, 0 already current", endpoints),
		fmt.Sprintf("request option secrets: %d resealed, 0 already current", endpoints/2), `sealed under key "k2"`, "published: cdc confirmed slot"} {
		if !strings.Contains(out, want) {
			t.Fatalf("first reseal printed\n%s\nwant %q", out, want)
		}
	}
	out, err = runCLI(t, cmdArgs("secrets", []string{"reseal", "--database-url", db.URL, "--cdc-slot", db.Name}, keysBoth)...)
	if err != nil || !strings.Contains(out, fmt.Sprintf("signing secrets:        0 resealed, %d already current", endpoints)) ||
		!strings.Contains(out, fmt.Sprintf("request option secrets: 0 resealed, %d already current", endpoints/2)) {
		t.Fatalf("second reseal: %v\n%s", err, out)
	}
	checkStoredUnder(t, db, newKey, endpoints)

	// 4-5: the old key removed; senders and admin rolled out again.
	sender = roll(sender, startSender, keysNew)
	admin = roll(admin, startAdmin, keysNew)
	phase("with the new key alone")
	// The admin API seals under the new key too: a rotated secret is sealed under k2.
	rot, err := api.RotateSecretWithResponse(ctx, "pa", endpointIDs(t, db)[0], adminclient.RotateSecretJSONRequestBody{})
	must(t, "rotate a secret", rot, err)
	checkStoredUnder(t, db, newKey, endpoints+1)

	stopLoad()
	eventsMu.Lock()
	total := len(events)
	eventsMu.Unlock()
	testenv.Eventually(t, 2*time.Minute, "every event delivered to every endpoint", delivered(total))
	for i, rx := range receivers {
		if n := rx.refused.Load(); n != 0 {
			t.Errorf("receiver %d refused %d requests (last: %v)", i, n, rx.lastRefuse.Load())
		}
	}
	// Nothing failed to open on the way: no attempt failed for want of a key.
	var internal int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempt WHERE error_category = 'internal'`).Scan(&internal); err != nil {
		t.Fatal(err)
	}
	if internal != 0 {
		t.Errorf("%d attempts failed as internal (a secret that did not open)", internal)
	}
	t.Logf("%s lane: %d events to %d endpoints across the rotation", k.Lane, total, endpoints)
	_, _ = sender, admin
}

// endpointIDs are the ids of the test's endpoints, in id order.
func endpointIDs(t *testing.T, db *testenv.Database) []string {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT id FROM endpoint ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// writeLegacySecret rewrites the first endpoint's signing secret in the format of before key
// ids (nonce || AES-256-GCM, no header), under the old key, as a database sealed by the
// previous release holds it.
func writeLegacySecret(t *testing.T, db *testenv.Database, oldRaw string) {
	t.Helper()
	ctx := context.Background()
	old, err := secretbox.ParseKey(oldRaw)
	if err != nil {
		t.Fatal(err)
	}
	ring := secretbox.KeyringOf(old)
	var eid, sid string
	var sealed []byte
	if err := db.Pool.QueryRow(ctx, `SELECT endpoint_id, id, secret_ciphertext FROM endpoint_secret ORDER BY endpoint_id LIMIT 1`).Scan(&eid, &sid, &sealed); err != nil {
		t.Fatal(err)
	}
	plain, err := ring.Open(sealed, secretbox.AAD(eid, sid))
	if err != nil {
		t.Fatal(err)
	}
	legacy := legacySealForTest(t, oldRaw, plain, secretbox.AAD(eid, sid))
	if _, ok := secretbox.KeyID(legacy); ok {
		t.Fatal("the legacy value reads as keyed")
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE endpoint_secret SET secret_ciphertext = $3 WHERE endpoint_id = $1 AND id = $2`, eid, sid, legacy); err != nil {
		t.Fatal(err)
	}
}

// checkStoredUnder checks that every stored secret names key id k2 and opens with the new key
// alone, and that there are want signing secrets.
func checkStoredUnder(t *testing.T, db *testenv.Database, newKey secretbox.Key, want int) {
	t.Helper()
	ctx := context.Background()
	ring, err := secretbox.NewKeyring("k2", []secretbox.NamedKey{{ID: "k2", Key: newKey}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool.Query(ctx, `SELECT endpoint_id, id, secret_ciphertext FROM endpoint_secret`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var eid, sid string
		var sealed []byte
		if err := rows.Scan(&eid, &sid, &sealed); err != nil {
			t.Fatal(err)
		}
		n++
		if id, ok := secretbox.KeyID(sealed); !ok || id != "k2" {
			t.Errorf("signing secret %s/%s is sealed under %q (keyed %v), want k2", eid, sid, id, ok)
		}
		if _, err := ring.Open(sealed, secretbox.AAD(eid, sid)); err != nil {
			t.Errorf("signing secret %s/%s does not open with the new key alone: %v", eid, sid, err)
		}
	}
	if n != want {
		t.Errorf("%d signing secrets stored, want %d", n, want)
	}
	rows, err = db.Pool.Query(ctx, `SELECT id, request_options FROM endpoint WHERE request_options ? 'auth'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var eid string
		var opts records.RequestOptions
		if err := rows.Scan(&eid, &opts); err != nil {
			t.Fatal(err)
		}
		if id, _ := secretbox.KeyID(opts.Auth.SecretCiphertext); id != "k2" {
			t.Errorf("endpoint %s auth secret sealed under %q, want k2", eid, id)
		}
		if _, err := ring.Open(opts.Auth.SecretCiphertext, records.AuthAAD(eid)); err != nil {
			t.Errorf("endpoint %s auth secret does not open with the new key alone: %v", eid, err)
		}
	}
}

// legacySealForTest seals as the release before key ids did: a random nonce, then
// AES-256-GCM(key, nonce, plaintext, aad).
func legacySealForTest(t *testing.T, rawKey string, plaintext, aad []byte) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(rawKey)
	if err != nil {
		t.Fatal(err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		t.Fatal(err)
	}
	return gcm.Seal(nonce, nonce, plaintext, aad)
}
