//go:build secure

package secure_test

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/testkit/secure"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
)

// Bounds, generous: a JVM and the pipeline share 2 cores with other work.
const (
	startTimeout = 2 * time.Minute
	drainTimeout = 2 * time.Minute
	// eventsPerPartner: two partners, one endpoint each subscribed to everything.
	eventsPerPartner = 1000
)

// The broker is started once for the package; its data and every process's log stay under
// .data/test-secure until the next run.
var shared struct {
	once   sync.Once
	broker *secure.Broker
	dir    string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.broker != nil {
		if err := shared.broker.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "secure:", err)
		}
	}
	testenv.CleanupBinary()
	os.Exit(code)
}

func broker(t *testing.T) (*secure.Broker, string) {
	t.Helper()
	shared.once.Do(func() {
		repo, err := filepath.Abs("../../..")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = filepath.Join(repo, ".data", "test-secure")
		if shared.err = os.RemoveAll(shared.dir); shared.err != nil {
			return
		}
		if shared.err = os.MkdirAll(filepath.Join(shared.dir, "logs"), 0o755); shared.err != nil {
			return
		}
		log, err := os.Create(filepath.Join(shared.dir, "logs", "broker.log"))
		if err != nil {
			shared.err = err
			return
		}
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		shared.broker, shared.err = secure.Start(ctx, repo, shared.dir, log)
		if shared.err == nil {
			t.Logf("SASL_SSL broker up in %s on %s", time.Since(began).Round(100*time.Millisecond), shared.broker.Addr())
		}
	})
	if shared.err != nil {
		t.Fatalf("secured broker: %v", shared.err)
	}
	return shared.broker, shared.dir
}

// installation is one hookstream installation on the secured broker: its database, topics,
// ACLs and the processes started for it.
type installation struct {
	t      *testing.T
	b      *secure.Broker
	db     *testenv.Database
	prefix string
	vars   map[string]string
	logs   string
	bin    string
	admin  *harness.AdminClient
	mu     sync.Mutex
	procs  []*harness.Process
}

// newInstallation grants the setup principal and each component its ACLs (secure.ACLs) and
// nothing else, then creates the topics with `hookstream topics create` as the setup principal.
func newInstallation(t *testing.T) *installation {
	t.Helper()
	b, dir := broker(t)
	db := testenv.NewDatabase(t)
	in := &installation{t: t, b: b, db: db, prefix: "s" + scratch.RandomHex(4), bin: testenv.Binary(t),
		logs: filepath.Join(dir, "logs", t.Name())}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	token := harness.NewAdminToken()
	in.admin = harness.NewAdminClient("http://"+addr, token)
	in.vars, err = harness.Installation{DatabaseURL: db.URL, Brokers: []string{b.Addr()}, Prefix: in.prefix, Partitions: 4,
		Slot: db.Name, AdminAddr: addr, AdminToken: token}.Vars()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in.superAdmin(func(adm *kadm.Client) error { return secure.Apply(ctx, adm, secure.ACLs(in.prefix)) })
	for _, sub := range []string{"create", "describe"} {
		if err := harness.RunToEnd(ctx, in.bin, []string{"topics", sub}, harness.Environ(in.with(b.Vars(secure.Setup))),
			filepath.Join(in.logs, "topics.log"), startTimeout); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		in.mu.Lock()
		procs := in.procs
		in.mu.Unlock()
		if err := harness.StopAll(procs, 30*time.Second); err != nil {
			t.Logf("stopping the processes: %v", err)
		}
	})
	return in
}

// with is the installation's variables with more, which win.
func (in *installation) with(more ...map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in.vars {
		out[k] = v
	}
	for _, m := range more {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// superAdmin runs f with an admin client of the super user.
func (in *installation) superAdmin(f func(*kadm.Client) error) {
	in.t.Helper()
	cl, err := in.b.Client(secure.Super)
	if err != nil {
		in.t.Fatal(err)
	}
	defer cl.Close()
	if err := f(kadm.NewClient(cl)); err != nil {
		in.t.Fatal(err)
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start starts `hookstream kind` connecting as user, with extra variables, and returns it and
// its probe's base URL; it does not wait for it to be ready.
func (in *installation) start(kind, user string, extra map[string]string) (*harness.Process, string) {
	t := in.t
	t.Helper()
	own := in.with(in.b.Vars(user), map[string]string{"HOOKSTREAM_INSTANCE_ID": kind + "-1"}, extra)
	probe := "http://" + in.vars["HOOKSTREAM_ADMIN_ADDR"]
	if kind != "admin" {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		own["HOOKSTREAM_METRICS_ADDR"] = addr
		probe = "http://" + addr
	} else {
		own["HOOKSTREAM_METRICS_ADDR"] = ""
	}
	p, err := harness.StartProcess(kind, in.bin, []string{kind}, harness.Environ(own), filepath.Join(in.logs, kind+".log"))
	if err != nil {
		t.Fatal(err)
	}
	in.mu.Lock()
	in.procs = append(in.procs, p)
	in.mu.Unlock()
	return p, probe
}

// startReady is start, then waits until the process is ready.
func (in *installation) startReady(kind, user string) (*harness.Process, string) {
	in.t.Helper()
	p, probe := in.start(kind, user, nil)
	if err := harness.WaitReady(context.Background(), p, probe+"/readyz", startTimeout); err != nil {
		in.t.Fatal(err)
	}
	return p, probe
}

// waitNotReady waits until the probe answers 503 with a kafka check that says want, and returns
// that check's text.
func waitNotReady(t *testing.T, p *harness.Process, probe, want string) string {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last string
	for {
		resp, err := http.Get(probe + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
			if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), want) {
				return string(body)
			}
		}
		if done, err := p.Exited(); done {
			t.Fatalf("%s exited (%v) instead of waiting, not ready:\n%s", p.Name, err, p.LogTail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's /readyz never said %q; last %s:\n%s", p.Name, want, last, p.LogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// caFile writes the certificate of a CA the broker's certificate is not signed by.
func untrustedCA(t *testing.T) string {
	ca := testenv.NewCA(t, "not the broker's CA")
	p := filepath.Join(t.TempDir(), "untrusted-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// R12: every component as its own process and its own SCRAM user with only the ACLs of
// docs/operations.md, over SASL_SSL. The recorder starts with a wrong password and the sender
// trusting another CA: each waits, not ready, /readyz and its log saying why (never the
// password), while half the load is committed; the recorder's password file is then corrected
// (it connects by itself) and the sender restarted with the right CA. Every event reaches its
// endpoint, signed, and the history has every delivery.
func TestSecuredPipeline(t *testing.T) {
	in := newInstallation(t)
	ctx := context.Background()
	in.startReady("admin", secure.Admin)
	in.startReady("cdc", secure.CDC)
	_, fanoutProbe := in.startReady("fanout", secure.Fanout)
	in.startReady("retry", secure.Retry)
	testenv.WaitSlotStreaming(t, in.db.Pool, in.db.Name, startTimeout)

	// The recorder with a wrong password, in a file as a mounted secret would hold it.
	rightPassword, err := os.ReadFile(in.b.PasswordFile(secure.Recorder))
	if err != nil {
		t.Fatal(err)
	}
	const wrongPassword = "not-the-recorder-password"
	pwFile := filepath.Join(in.logs, "recorder-password") // outlives the processes, unlike t.TempDir

	if err := os.WriteFile(pwFile, []byte(wrongPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	recorder, recorderProbe := in.start("recorder", secure.Recorder, map[string]string{"HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE": pwFile})
	// The sender trusting another CA.
	badSender, badSenderProbe := in.start("sender", secure.Sender, map[string]string{"HOOKSTREAM_KAFKA_TLS_CA_FILE": untrustedCA(t)})

	said := waitNotReady(t, recorder, recorderProbe, "SASL authentication failed for user hookstream-recorder")
	t.Logf("recorder /readyz: %s", said)
	said = waitNotReady(t, badSender, badSenderProbe, "TLS handshake: certificate signed by unknown authority")
	t.Logf("sender /readyz: %s", said)

	rec := map[string]*harness.Receiver{}
	for _, p := range []string{"p1", "p2"} {
		if err := in.admin.CreatePartner(ctx, p); err != nil {
			t.Fatal(err)
		}
		rx, err := harness.StartReceiver()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rx.Close)
		n, url := rx.AddEndpoint()
		_, secret, err := in.admin.CreateEndpoint(ctx, p, url, []string{"*"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rx.Endpoint(n).SetSecret(secret); err != nil {
			t.Fatal(err)
		}
		rec[p] = rx
	}

	gen, err := harness.NewGenerator(in.db.Pool, 4, func(n int64) outbox.Event { return harness.NewEvent([]string{"p1", "p2"}[n%2], n) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Burst(ctx, eventsPerPartner, 10); err != nil {
		t.Fatal(err)
	}

	// Corrected: the recorder reads its password file again at its next authentication; the
	// sender is restarted with the broker's CA.
	if err := os.WriteFile(pwFile, rightPassword, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := harness.WaitReady(ctx, recorder, recorderProbe+"/readyz", startTimeout); err != nil {
		t.Fatal(err)
	}
	if err := badSender.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	in.startReady("sender", secure.Sender)
	if _, err := gen.Burst(ctx, eventsPerPartner, 10); err != nil {
		t.Fatal(err)
	}

	want := in.waitDelivered(rec, drainTimeout)
	in.waitRecorded(want, time.Minute)
	t.Logf("%d events delivered over SASL_SSL with least-privilege ACLs, every signature verified", want)

	// The log said why, once, and that it connected again (the watch looks every 10 s).
	waitLog(t, recorder, `"msg":"kafka: cannot connect"`, "SASL authentication failed for user hookstream-recorder", `"msg":"kafka: connected"`)
	for _, p := range in.procs {
		for _, secret := range []string{wrongPassword, strings.TrimSpace(string(rightPassword))} {
			if b, _ := os.ReadFile(p.LogPath); strings.Contains(string(b), secret) {
				t.Errorf("%s's log holds a password", p.Name)
			}
		}
	}
	// Nothing any component did, its side work included (lag monitors, endpoint views, fanout's
	// hanging-transaction repairer), was refused by the ACLs.
	for _, p := range in.procs {
		if b, _ := os.ReadFile(p.LogPath); strings.Contains(string(b), "AUTHORIZATION_FAILED") {
			t.Errorf("%s was refused by an ACL:\n%s", p.Name, grepLines(b, "AUTHORIZATION_FAILED"))
		}
	}
	sums, err := harness.ScrapeAllSums(ctx, []string{fanoutProbe + "/metrics"}, "hookstream_kafka_hanging_transaction_checks_failed_total", "")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := sums["hookstream_kafka_hanging_transaction_checks_failed_total"]; !ok || v != 0 {
		t.Errorf("fanout's hanging-transaction checks failed %v times (exported: %v), want 0", v, ok)
	}
}

// grepLines is the lines of b that hold s.
func grepLines(b []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// waitLog waits (bounded) until p's log says every one of wants.
func waitLog(t *testing.T, p *harness.Process, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(p.LogPath)
		var missing []string
		for _, w := range wants {
			if !strings.Contains(string(b), w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's log does not say %q:\n%s", p.Name, missing, p.LogTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitDelivered waits (bounded) until every partner's endpoint has accepted every outbox event
// of its partner, and that none got a request whose signature did not verify; it returns the
// number of deliveries.
func (in *installation) waitDelivered(rx map[string]*harness.Receiver, timeout time.Duration) int {
	t := in.t
	t.Helper()
	owed := map[string][]string{}
	rows, err := in.db.Pool.Query(context.Background(), `SELECT event_id, partner_id FROM outbox_event`)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for rows.Next() {
		var id, partner string
		if err := rows.Scan(&id, &partner); err != nil {
			t.Fatal(err)
		}
		owed[partner] = append(owed[partner], id)
		total++
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if total < 2*eventsPerPartner {
		t.Fatalf("%d events in the outbox, want %d", total, 2*eventsPerPartner)
	}
	deadline := time.Now().Add(timeout)
	for {
		left := 0
		for p, ids := range owed {
			owed[p] = rx[p].Endpoint(0).Unreceived(ids)
			left += len(owed[p])
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries missing %s after the load", left, total, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for p, r := range rx {
		if _, bad := r.Endpoint(0).Snapshot(); bad > 0 {
			t.Errorf("%s's endpoint got %d requests whose signature did not verify", p, bad)
		}
	}
	return total
}

// waitRecorded waits (bounded) until the history holds want succeeded deliveries.
func (in *installation) waitRecorded(want int, timeout time.Duration) {
	t := in.t
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var n int
		if err := in.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery WHERE state = 'succeeded'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("history: %d of %d deliveries succeeded %s after the receivers had them all", n, want, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The ACLs are least privilege, and real: with exactly the documented grants, no component but
// cdc may write the events topic, and admin may not use cdc's transactional id (nor may any
// other component), while TestSecuredPipeline shows that every component works with them.
func TestLeastPrivilege(t *testing.T) {
	in := newInstallation(t)
	names := topics.For(in.prefix)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, user := range []string{secure.Fanout, secure.Sender, secure.Retry, secure.Recorder, secure.Admin} {
		cl, err := in.b.Client(user, kgo.RecordRetries(2))
		if err != nil {
			t.Fatal(err)
		}
		err = cl.ProduceSync(ctx, &kgo.Record{Topic: names.Events, Value: []byte(`{}`)}).FirstErr()
		cl.Close()
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("%s producing to %s: %v, want TOPIC_AUTHORIZATION_FAILED", user, names.Events, err)
		}
	}
	cdcTxn := in.prefix + ".cdc." + in.db.Name
	for _, user := range []string{secure.Admin, secure.Fanout, secure.Sender} {
		cl, err := in.b.Client(user, kgo.TransactionalID(cdcTxn), kgo.RecordRetries(2))
		if err != nil {
			t.Fatal(err)
		}
		err = cl.BeginTransaction()
		if err == nil {
			err = cl.ProduceSync(ctx, &kgo.Record{Topic: names.Deliveries, Value: []byte(`{}`)}).FirstErr()
		}
		cl.Close()
		if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
			t.Errorf("%s using cdc's transactional id %s: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", user, cdcTxn, err)
		}
	}
	// What fanout's hanging-transaction repairer asks (internal/kafkatxn) it may ask of every
	// topic of the installation and every transactional id: its ACLs are enough for its work.
	fcl, err := in.b.Client(secure.Fanout)
	if err != nil {
		t.Fatal(err)
	}
	defer fcl.Close()
	fadm := kadm.NewClient(fcl)
	md, err := fadm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set := kadm.TopicsSet{}
	for name, parts := range md.Topics.TopicsSet() {
		if strings.HasPrefix(name, in.prefix+".") {
			set[name] = parts
		}
	}
	if len(set) != len(topics.Config{Prefix: in.prefix}.Specs()) {
		t.Errorf("fanout sees %d topics of the installation, want all %d", len(set), len(topics.Config{Prefix: in.prefix}.Specs()))
	}
	described, err := fadm.DescribeProducers(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	described.EachPartition(func(p kadm.DescribedProducersPartition) {
		if p.Err != nil {
			t.Errorf("fanout describing the producers of %s/%d: %v", p.Topic, p.Partition, p.Err)
		}
	})
	if _, err := fadm.ListTransactions(ctx, nil, nil); err != nil {
		t.Errorf("fanout listing transactions: %v", err)
	}

	// The sender may not read what fanout reads, nor commit offsets for fanout's group.
	cl, err := in.b.Client(secure.Sender, kgo.ConsumerGroup(in.prefix+".fanout"), kgo.ConsumeTopics(names.Events))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
	defer pcancel()
	var refused error
	for refused == nil && pctx.Err() == nil {
		cl.PollFetches(pctx).EachError(func(_ string, _ int32, err error) {
			if errors.Is(err, kerr.GroupAuthorizationFailed) || errors.Is(err, kerr.TopicAuthorizationFailed) {
				refused = err
			}
		})
	}
	if refused == nil {
		t.Error("the sender joined fanout's group on the events topic unrefused")
	}
}
