//go:build cluster

package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/eventtype"
	"github.com/hookstream/hookstream/internal/ledger"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/testkit/cluster"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
)

// Bounds, generous: three JVMs and the pipeline share 2 cores with other work.
const (
	startTimeout = 3 * time.Minute
	// maxPause bounds the longest time without an accepted delivery while the load runs,
	// broker kills included: a killed node is fenced after its session (9 s), its partitions
	// and coordinators move, and the clients find them again.
	maxPause = 60 * time.Second
	// takeoverBound bounds how soon the standby cdc streams after the active one was killed.
	takeoverBound = 60 * time.Second
	drainTimeout  = 3 * time.Minute
	brokerDown    = 5 * time.Second  // a killed node stays down this long before it is started again
	quiet         = 10 * time.Second // the load goes on this long after the last node is back
)

// The cluster is shared by the package's tests (starting three brokers takes a minute); each
// test has its own database, slot and topic prefix. Its data and every process's log stay under
// .data/test-cluster until the next run.
var shared struct {
	once    sync.Once
	brokers *cluster.Brokers
	dir     string
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.brokers != nil {
		if err := shared.brokers.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "cluster:", err)
		}
	}
	testenv.CleanupBinary()
	os.Exit(code)
}

func repo(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// brokers starts the shared cluster on first use.
func brokers(t *testing.T) (*cluster.Brokers, string) {
	t.Helper()
	shared.once.Do(func() {
		shared.dir = filepath.Join(repo(t), ".data", "test-cluster")
		if shared.err = os.RemoveAll(shared.dir); shared.err != nil {
			return
		}
		if shared.err = os.MkdirAll(filepath.Join(shared.dir, "logs"), 0o755); shared.err != nil {
			return
		}
		log, err := os.Create(filepath.Join(shared.dir, "logs", "brokers.log"))
		if err != nil {
			shared.err = err
			return
		}
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		shared.brokers, shared.err = cluster.Start(ctx, repo(t), shared.dir, log)
		t.Logf("three brokers up in %s: %s", time.Since(began).Round(100*time.Millisecond), strings.Join(shared.brokers.Addrs(), ","))
	})
	if shared.err != nil {
		t.Fatalf("three-broker cluster: %v", shared.err)
	}
	return shared.brokers, shared.dir
}

// installation is one hookstream installation on the cluster: its database, topics and the
// processes started for it.
type installation struct {
	t       *testing.T
	b       *cluster.Brokers
	db      *testenv.Database
	prefix  string
	vars    map[string]string
	logs    string
	bin     string
	admin   *harness.AdminClient
	mu      sync.Mutex
	procs   []*harness.Process
	probeOf map[*harness.Process]string
}

// newInstallation migrates nothing (the test database holds the schema), creates the topics
// with `hookstream topics create` as an operator would, and checks that they took the
// cluster's replication.
func newInstallation(t *testing.T) *installation {
	t.Helper()
	b, dir := brokers(t)
	db := testenv.NewDatabase(t)
	in := &installation{t: t, b: b, db: db, prefix: "c" + scratch.RandomHex(4), bin: testenv.Binary(t),
		logs: filepath.Join(dir, "logs", t.Name()), probeOf: map[*harness.Process]string{}}
	port, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	token := harness.NewAdminToken()
	in.admin = harness.NewAdminClient("http://"+port, token)
	in.vars, err = harness.Installation{DatabaseURL: db.URL, Brokers: b.Addrs(), Prefix: in.prefix, Partitions: 6,
		Slot: db.Name, AdminAddr: port, AdminToken: token}.Vars()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := harness.RunToEnd(ctx, in.bin, []string{"topics", "create"}, harness.Environ(in.vars),
		filepath.Join(in.logs, "topics.log"), startTimeout); err != nil {
		t.Fatal(err)
	}
	in.checkReplication()
	t.Cleanup(func() {
		in.mu.Lock()
		procs := in.procs
		in.mu.Unlock()
		if err := harness.StopAll(procs, 30*time.Second); err != nil {
			t.Logf("stopping the processes: %v", err)
		}
		if err := harness.DeleteKafkaPrefix(b.Addrs(), in.prefix); err != nil {
			t.Logf("%v", err)
		}
	})
	return in
}

// freeAddr is a free loopback address for a listener that is never restarted.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// checkReplication fails the test unless every topic of the installation has a replica on
// each node and min.insync.replicas 2. Metadata of topics created a moment ago can take a
// little while to reach every node: it asks again for up to 30 s.
func (in *installation) checkReplication() {
	t := in.t
	cl, err := kgo.NewClient(kgo.SeedBrokers(in.b.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var names []string
	for _, s := range (topics.Config{Prefix: in.prefix}).Specs() {
		names = append(names, s.Name)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		problem := replicationProblem(adm, names)
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(problem)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// replicationProblem names the first topic of names without a replica on each node or with
// another min.insync.replicas than 2; empty when there is none.
func replicationProblem(adm *kadm.Client, names []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return err.Error()
	}
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return err.Error()
	}
	for _, name := range names {
		td, ok := details[name]
		if !ok || td.Err != nil || len(td.Partitions) == 0 {
			return fmt.Sprintf("%s: no metadata (%v)", name, td.Err)
		}
		for _, p := range td.Partitions.Sorted() {
			if len(p.Replicas) != cluster.Nodes {
				return fmt.Sprintf("%s/%d has replicas %v, want one on each of the %d nodes", name, p.Partition, p.Replicas, cluster.Nodes)
			}
		}
		rc, err := configs.On(name, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			return fmt.Sprintf("%s: configs: %v", name, err)
		}
		isr := ""
		for _, kv := range rc.Configs {
			if kv.Key == "min.insync.replicas" && kv.Value != nil {
				isr = *kv.Value
			}
		}
		if isr != "2" {
			return fmt.Sprintf("%s: min.insync.replicas %q, want 2", name, isr)
		}
	}
	return ""
}

// start starts `hookstream kind` as instance id with its own probe address and waits (bounded)
// until it is ready. It returns the process and its probe's base URL.
func (in *installation) start(kind, id string) (*harness.Process, string) {
	t := in.t
	t.Helper()
	own := map[string]string{"HOOKSTREAM_INSTANCE_ID": id}
	for k, v := range in.vars {
		own[k] = v
	}
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
	p, err := harness.StartProcess(id, in.bin, []string{kind}, harness.Environ(own), filepath.Join(in.logs, id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	in.mu.Lock()
	in.procs = append(in.procs, p)
	in.probeOf[p] = probe
	in.mu.Unlock()
	if err := harness.WaitReady(context.Background(), p, probe+"/readyz", startTimeout); err != nil {
		t.Fatal(err)
	}
	return p, probe
}

// cdcActive says whether the cdc process behind probe holds the slot (hookstream_cdc_active 1).
func cdcActive(probe string) bool {
	sums, missed := harness.ScrapeSums(context.Background(), []string{probe + "/metrics"}, "hookstream_cdc_active")
	return missed == 0 && sums["hookstream_cdc_active"] == 1
}

// checkEventsTopic fails the test unless the events topic holds every outbox event exactly
// once and nothing else.
func (in *installation) checkEventsTopic() []*kgo.Record {
	t := in.t
	t.Helper()
	ids, _ := in.db.OutboxInCommitOrder(in.t)
	records, err := harness.ReadTopic(context.Background(), in.b.Addrs(), topics.For(in.prefix).Events, len(ids), 3*time.Second, drainTimeout)
	count := harness.CountKeys(records, ids)
	t.Logf("events topic: %s; %d events committed", count, len(ids))
	if count.Unknown > 0 {
		in.explainUnknown(records, ids)
	}
	if err != nil || !count.Exact() {
		t.Fatalf("events topic does not hold every committed event exactly once: %s (%v)", count, err)
	}
	return records
}

// explainUnknown keeps the evidence of records whose event the outbox did not hold when it was
// read: where each record sits in the topic, when it was produced, and whether the outbox holds
// the event a few seconds later (a commit that was still in doubt when the test read the table)
// or not at all (a record without a committed row: a loss of the outbox's promise).
func (in *installation) explainUnknown(records []*kgo.Record, ids []string) {
	t := in.t
	t.Helper()
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	time.Sleep(5 * time.Second)
	for _, r := range records {
		id := string(r.Key)
		if known[id] {
			continue
		}
		var occurred time.Time
		err := in.db.Pool.QueryRow(context.Background(), `SELECT occurred_at FROM outbox_event WHERE event_id = $1`, id).Scan(&occurred)
		switch {
		case err == nil:
			t.Logf("unknown %s (partition %d, offset %d, produced %s): in the outbox 5 s later (occurred_at %s): it was committed after the table was read",
				id, r.Partition, r.Offset, r.Timestamp.UTC().Format(time.RFC3339Nano), occurred.UTC().Format(time.RFC3339Nano))
		case errors.Is(err, pgx.ErrNoRows):
			t.Logf("unknown %s (partition %d, offset %d, produced %s): not in the outbox 5 s later either", id, r.Partition, r.Offset, r.Timestamp.UTC().Format(time.RFC3339Nano))
		default:
			t.Logf("unknown %s: the outbox could not be read: %v", id, err)
		}
	}
}

// receipts is every request the receivers saw, for the ledger.
type receipts struct {
	mu  sync.Mutex
	all []ledger.Receipt
}

func (r *receipts) add(rc ledger.Receipt) {
	r.mu.Lock()
	r.all = append(r.all, rc)
	r.mu.Unlock()
}

func (r *receipts) snapshot() []ledger.Receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

// endpoint is one created endpoint of the topology and its receiver.
type endpoint struct {
	id, partner string
	types       []string
	rx          *harness.Receiver
}

// createEndpoint creates an endpoint of partner subscribed to types on a receiver of its own
// that answers 200 and records every request.
func (in *installation) createEndpoint(partner string, types []string, rec *receipts) *endpoint {
	t := in.t
	rx, err := harness.StartReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rx.Close)
	n, url := rx.AddEndpoint()
	id, secret, err := in.admin.CreateEndpoint(context.Background(), partner, url, types)
	if err != nil {
		t.Fatal(err)
	}
	ep := &endpoint{id: id, partner: partner, types: types, rx: rx}
	if err := rx.Endpoint(n).SetSecret(secret); err != nil {
		t.Fatal(err)
	}
	rx.Endpoint(n).SetObserver(func(r harness.Request) {
		var env struct {
			EventID string `json:"event_id"`
			Type    string `json:"type"`
		}
		_ = json.Unmarshal(r.Body, &env) // not an envelope: an empty id, counted as a mismatch
		rec.add(ledger.Receipt{EventID: env.EventID, EndpointID: id, PartnerID: partner, WebhookID: r.WebhookID,
			ReceivedAt: r.ReceivedAt, Verified: r.Verified, Status: r.Status, Type: env.Type})
	})
	return ep
}

// R12, R38: the pipeline, every component its own process, runs on three brokers under a steady
// load while the node coordinating fanout's group is killed with SIGKILL, started again, and,
// once every replica is back in sync, the node leading cdc's checkpoints is killed too. Every
// committed event is in the events topic exactly once, every delivery it owes reaches its
// receiver, signed, with the history agreeing, and deliveries never pause longer than maxPause.
func TestBrokerKillsLoseNothing(t *testing.T) {
	in := newInstallation(t)
	ctx := context.Background()
	in.start("admin", "admin")
	cdcProc, _ := in.start("cdc", "cdc-1")
	for _, kind := range []string{"fanout", "sender", "retry", "recorder"} {
		in.start(kind, kind+"-1")
	}
	testenv.WaitSlotStreaming(t, in.db.Pool, in.db.Name, startTimeout)
	groups := []string{in.prefix + ".fanout", in.prefix + ".sender", in.prefix + ".recorder"}
	if err := harness.WaitGroups(ctx, in.b.Addrs(), groups, startTimeout); err != nil {
		t.Fatal(err)
	}
	rec := &receipts{}
	for _, p := range []string{"p1", "p2"} {
		if err := in.admin.CreatePartner(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	eps := []*endpoint{
		in.createEndpoint("p1", []string{"*"}, rec),
		in.createEndpoint("p1", []string{"api_key.*"}, rec),
		in.createEndpoint("p2", []string{"*"}, rec),
	}

	// The load runs from before the first kill until quiet after the second node is back: how
	// long a killed node takes to start again on a busy machine varies by a minute.
	const rate = 40
	gen, err := harness.NewGenerator(in.db.Pool, 4, func(n int64) outbox.Event { return harness.NewEvent([]string{"p1", "p2"}[n%2], n) })
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	loaded := make(chan error, 1)
	go func() { _, err := gen.Steady(loadCtx, rate, time.Hour); loaded <- err }()

	outages := in.killBrokers(t, began)
	time.Sleep(quiet)
	stopLoad()
	if err := <-loaded; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	loadEnd := time.Now()
	t.Logf("load: %d events/s for %s, broker kills over %s after its start", rate, loadEnd.Sub(began).Round(time.Second), outages[len(outages)-1].To.Sub(began).Round(time.Second))
	if done, err := cdcProc.Exited(); done {
		t.Fatalf("cdc exited during the kills (%v):\n%s", err, cdcProc.LogTail())
	}

	in.checkEventsTopic()
	want := in.waitDelivered(eps, drainTimeout)
	in.waitRecorded(want, time.Minute)
	in.checkLedger(rec.snapshot(), outages)

	pause, at := longestPause(rec.snapshot(), began.Add(5*time.Second), loadEnd)
	t.Logf("longest pause between accepted deliveries during the load: %s, from %s after its start", pause.Round(100*time.Millisecond), at.Sub(began).Round(time.Second))
	if pause > maxPause {
		t.Fatalf("deliveries paused for %s during the load (from %s after its start), bound %s", pause.Round(100*time.Millisecond), at.Sub(began).Round(time.Second), maxPause)
	}
}

// killBrokers kills two nodes one after the other, each down for brokerDown and started again,
// the second only once every replica is back in sync; it returns the outages.
func (in *installation) killBrokers(t *testing.T, began time.Time) []ledger.Outage {
	ctx := context.Background()
	time.Sleep(10 * time.Second)
	first, err := in.b.Coordinator(ctx, in.prefix+".fanout")
	if err != nil {
		t.Fatal(err)
	}
	second, err := in.b.Leader(ctx, topics.For(in.prefix).Checkpoints)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		second = first%cluster.Nodes + 1
	}
	var outages []ledger.Outage
	for i, n := range []int{first, second} {
		o := ledger.Outage{Kind: "broker", From: time.Now()}
		if err := in.b.Kill(n); err != nil {
			t.Fatal(err)
		}
		t.Logf("node %d killed %s into the load", n, o.From.Sub(began).Round(time.Second))
		time.Sleep(brokerDown)
		if err := in.b.StartNode(ctx, n); err != nil {
			t.Fatal(err)
		}
		o.To = time.Now()
		outages = append(outages, o)
		if err := in.b.WaitInSync(ctx, in.prefix+".", 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		t.Logf("node %d back after %s, every replica in sync %s into the load", n, o.To.Sub(o.From).Round(time.Second), time.Since(began).Round(time.Second))
		if i == 0 {
			time.Sleep(5 * time.Second)
		}
	}
	return outages
}

// waitDelivered waits (bounded) until every endpoint has accepted every outbox event it is
// subscribed to, and returns how many deliveries that is.
func (in *installation) waitDelivered(eps []*endpoint, timeout time.Duration) int {
	t := in.t
	t.Helper()
	rows, err := in.db.Pool.Query(context.Background(), `SELECT event_id, partner_id, type FROM outbox_event`)
	if err != nil {
		t.Fatal(err)
	}
	owed := map[*endpoint][]string{}
	total := 0
	var id, partner, typ string
	if _, err := pgx.ForEachRow(rows, []any{&id, &partner, &typ}, func() error {
		for _, ep := range eps {
			if ep.partner == partner && eventtype.MatchesAny(ep.types, typ) {
				owed[ep] = append(owed[ep], id)
				total++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		left := 0
		for ep, ids := range owed {
			owed[ep] = ep.rx.Endpoint(0).Unreceived(ids)
			left += len(owed[ep])
		}
		if left == 0 {
			return total
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries not received %s after the load; the history of the first of them:\n%s",
				left, total, timeout, in.historyOf(owed, 5))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// historyOf says what the delivery history holds for up to n of the owed deliveries: where a
// delivery that never arrived stopped (no row: before the recorder; retrying: in a tier).
func (in *installation) historyOf(owed map[*endpoint][]string, n int) string {
	var b strings.Builder
	for ep, ids := range owed {
		for _, id := range ids {
			if n == 0 {
				return b.String()
			}
			n--
			var state, category string
			var attempts int
			var next *time.Time
			err := in.db.Pool.QueryRow(context.Background(), `SELECT state, attempt_count, next_attempt_at, coalesce(last_error_category, '')
				FROM delivery WHERE event_id = $1 AND endpoint_id = $2`, id, ep.id).Scan(&state, &attempts, &next, &category)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				fmt.Fprintf(&b, "  %s to %s: no delivery row\n", id, ep.id)
			case err != nil:
				fmt.Fprintf(&b, "  %s to %s: %v\n", id, ep.id, err)
			default:
				fmt.Fprintf(&b, "  %s to %s: %s after %d attempts (last error %q), next attempt %v\n", id, ep.id, state, attempts, category, next)
			}
		}
	}
	return b.String()
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

// checkLedger runs the ledger with the receipts: nothing missing, foreign, badly signed or
// contradicting the history, and requests the history lacks only around a broker outage.
func (in *installation) checkLedger(rec []ledger.Receipt, outages []ledger.Outage) {
	t := in.t
	t.Helper()
	rep, err := ledger.Check(context.Background(), in.db.Pool, ledger.Options{Receipts: rec, CoverAll: true,
		ClockSkew: 500 * time.Millisecond, Boundary: 100 * time.Millisecond, Outages: outages, MaxUnrecorded: -1})
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	rep.Print(&report)
	t.Logf("ledger:\n%s", report.String())
	failures := rep.Failures()
	if rep.Unrecorded > rep.UnrecordedAtKill {
		failures = append(failures, fmt.Sprintf("%d requests absent from the history with no broker outage near them", rep.Unrecorded-rep.UnrecordedAtKill))
	}
	if len(failures) > 0 {
		t.Fatalf("ledger: %s", strings.Join(failures, "; "))
	}
}

// longestPause is the longest time within [from, to] without an accepted request, and when it
// began.
func longestPause(rec []ledger.Receipt, from, to time.Time) (time.Duration, time.Time) {
	var times []time.Time
	for _, r := range rec {
		if r.Verified && r.Status >= 200 && r.Status < 300 {
			times = append(times, r.ReceivedAt)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	prev, longest, at := from, time.Duration(0), from
	for _, ts := range append(times, to) {
		if ts.Before(from) {
			continue
		}
		if ts.After(to) {
			ts = to
		}
		if d := ts.Sub(prev); d > longest {
			longest, at = d, prev
		}
		prev = ts
	}
	return longest, at
}

// R12: two cdc processes on the cluster, one streaming and one waiting; the active one is
// killed with SIGKILL while a client commits events one transaction at a time. The standby
// streams the slot within takeoverBound, and the events topic holds every committed event
// exactly once, each partner's in commit order: no gap, no duplicate.
func TestCDCStandbyTakesOver(t *testing.T) {
	in := newInstallation(t)
	ctx := context.Background()
	a, probeA := in.start("cdc", "cdc-1")
	b, probeB := in.start("cdc", "cdc-2")
	active, standby, standbyProbe := a, b, probeB
	deadline := time.Now().Add(startTimeout)
	for !cdcActive(probeA) && !cdcActive(probeB) {
		if time.Now().After(deadline) {
			t.Fatalf("no cdc became active within %s", startTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cdcActive(probeB) {
		active, standby, standbyProbe = b, a, probeA
	}
	if cdcActive(standbyProbe) {
		t.Fatal("both cdc processes say they are active")
	}
	testenv.WaitSlotStreaming(t, in.db.Pool, in.db.Name, startTimeout)

	// The outbox takes events of existing partners only (migration 0021); no admin runs here.
	in.db.Partners(t, "p1", "p2", "p3")
	// One client: its commits are the commit order, which each partner's events keep.
	gen, err := harness.NewGenerator(in.db.Pool, 1, func(n int64) outbox.Event { return harness.NewEvent([]string{"p1", "p2", "p3"}[n%3], n) })
	if err != nil {
		t.Fatal(err)
	}
	loaded := make(chan error, 1)
	go func() { _, err := gen.SteadyFor(ctx, 100, 40*time.Second); loaded <- err }()
	time.Sleep(10 * time.Second)
	if err := active.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for !cdcActive(standbyProbe) {
		if time.Since(killed) > takeoverBound {
			t.Fatalf("the standby did not take over within %s:\n%s", takeoverBound, standby.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("standby active %s after the kill", time.Since(killed).Round(10*time.Millisecond))
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}

	published := in.checkEventsTopic()
	_, order := in.db.OutboxInCommitOrder(in.t)
	got := map[string][]string{}
	for _, r := range published {
		for _, h := range r.Headers {
			if h.Key == records.HeaderPartnerID {
				got[string(h.Value)] = append(got[string(h.Value)], string(r.Key))
			}
		}
	}
	for p, ids := range order {
		if !slices.Equal(got[p], ids) {
			t.Errorf("partner %s: %d events in the topic, not in the %d committed in commit order", p, len(got[p]), len(ids))
		}
	}
}
