//go:build datalog

package datalog_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
)

// Bounds, generous: Connect's JVM, two cdc processes, admin and the load share 2 cores.
const (
	startTimeout  = 3 * time.Minute
	takeoverBound = 60 * time.Second
	drainTimeout  = 2 * time.Minute
	partitions    = 6
	loadRate      = 100 // events per second, one client: its commits are the commit order
)

// partners get the load in turn; partner is the one read alone (by partition and from a cursor).
var partners = []string{"north", "south", "east", "west"}

const partner = "north"

func TestMain(m *testing.M) {
	code := m.Run()
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

// lane is the test's installation on the real broker: its database, topics, processes and logs.
type lane struct {
	t       *testing.T
	repo    string
	brokers []string
	db      *testenv.Database
	prefix  string
	topic   string
	vars    map[string]string
	logs    string
	bin     string
	admin   *harness.AdminClient
	procs   []*harness.Process
	python  string
}

func newLane(t *testing.T) *lane {
	t.Helper()
	kafka := os.Getenv(testenv.KafkaVar)
	if kafka == "" || kafka == "embedded" {
		t.Fatalf("the datalog lane reads a real broker with kcat, Python and Kafka Connect: set %s to its address (make test-datalog does)", testenv.KafkaVar)
	}
	l := &lane{t: t, repo: repo(t), brokers: strings.Split(kafka, ","), db: testenv.NewDatabase(t),
		prefix: "dl" + scratch.RandomHex(4), bin: testenv.Binary(t)}
	l.topic = topics.For(l.prefix).Events
	l.logs = filepath.Join(dataDir(l.repo), "test-datalog", "logs", t.Name())
	if err := os.RemoveAll(l.logs); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	token := harness.NewAdminToken()
	l.admin = harness.NewAdminClient("http://"+addr, token)
	var err error
	l.vars, err = harness.Installation{DatabaseURL: l.db.URL, Brokers: l.brokers, Prefix: l.prefix, Partitions: partitions,
		Slot: l.db.Name, AdminAddr: addr, AdminToken: token}.Vars()
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.RunToEnd(context.Background(), l.bin, []string{"topics", "create"}, harness.Environ(l.vars),
		filepath.Join(l.logs, "topics.log"), startTimeout); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := harness.StopAll(l.procs, 30*time.Second); err != nil {
			t.Logf("stopping the processes: %v", err)
		}
		if err := harness.DeleteKafkaPrefix(l.brokers, l.prefix); err != nil {
			t.Logf("%v", err)
		}
	})
	out, err := exec.Command("bash", filepath.Join(l.repo, "deploy/datalog/connect.sh"), "python").Output()
	if err != nil {
		t.Fatalf("deploy/datalog/connect.sh python: %v", err)
	}
	l.python = strings.TrimSpace(string(out))
	return l
}

func dataDir(repo string) string {
	if d := os.Getenv("HOOKSTREAM_DATA_DIR"); d != "" {
		return d
	}
	return filepath.Join(repo, ".data")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start starts `hookstream kind` as instance id and waits until it is ready; it returns the
// process and its probe's base URL.
func (l *lane) start(kind, id string) (*harness.Process, string) {
	t := l.t
	t.Helper()
	own := map[string]string{"HOOKSTREAM_INSTANCE_ID": id}
	for k, v := range l.vars {
		own[k] = v
	}
	probe := "http://" + l.vars["HOOKSTREAM_ADMIN_ADDR"]
	if kind == "admin" {
		own["HOOKSTREAM_METRICS_ADDR"] = ""
	} else {
		addr := freeAddr(t)
		own["HOOKSTREAM_METRICS_ADDR"] = addr
		probe = "http://" + addr
	}
	p, err := harness.StartProcess(id, l.bin, []string{kind}, harness.Environ(own), filepath.Join(l.logs, id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	l.procs = append(l.procs, p)
	if err := harness.WaitReady(context.Background(), p, probe+"/readyz", startTimeout); err != nil {
		t.Fatal(err)
	}
	return p, probe
}

func cdcActive(probe string) bool {
	sums, missed := harness.ScrapeSums(context.Background(), []string{probe + "/metrics"}, "hookstream_cdc_active")
	return missed == 0 && sums["hookstream_cdc_active"] == 1
}

// startConnect runs Kafka Connect (deploy/datalog/connect.sh run) with the documented connector,
// deploy/datalog/events-jdbc-sink.properties (the page shows it as it is), changed only where an installation differs: its
// name (the consumer group), the topic and the database.
func (l *lane) startConnect() {
	t := l.t
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(l.repo, "deploy/datalog/events-jdbc-sink.properties"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(l.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(l.repo, "docs/consuming-the-log.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```properties\n"+string(doc)+"```\n") {
		t.Fatal("docs/consuming-the-log.md does not show deploy/datalog/events-jdbc-sink.properties as it is")
	}
	props := string(doc)
	for old, new := range map[string]string{
		"name=hookstream-events-jdbc-sink":                            "name=" + l.prefix + "-events-jdbc-sink",
		"topics=hookstream.events":                                    "topics=" + l.topic,
		"connection.url=jdbc:postgresql://127.0.0.1:54329/hookstream": "connection.url=jdbc:postgresql://" + u.Host + u.Path,
		"connection.username=postgres":                                "connection.username=" + u.User.Username(),
	} {
		if !strings.Contains(props, old+"\n") {
			t.Fatalf("events-jdbc-sink.properties no longer has the line %q", old)
		}
		props = strings.Replace(props, old+"\n", new+"\n", 1)
	}
	path := filepath.Join(l.logs, "connector.properties")
	if err := os.MkdirAll(l.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(freeAddr(t))
	env := append(os.Environ(), "CONNECT_BOOTSTRAP="+strings.Join(l.brokers, ","), "CONNECT_REST_PORT="+port,
		"CONNECT_DIR="+filepath.Join(l.logs, "connect"))
	p, err := harness.StartProcess("connect", "bash", []string{filepath.Join(l.repo, "deploy/datalog/connect.sh"), "run", path},
		env, filepath.Join(l.logs, "connect.out"))
	if err != nil {
		t.Fatal(err)
	}
	l.procs = append(l.procs, p)
}

// killMidTransaction SIGKILLs the active cdc while one of its Kafka transactions is open. cdc
// sends a transaction's records when it commits it, so the moment is short: the process is
// frozen (SIGSTOP) at random moments until, 300 ms into a freeze, some partition's end offset is
// past its last stable offset (records in the log that no commit marker will follow while it is
// frozen); then it is killed. Thawed (SIGCONT) otherwise, and tried again.
func (l *lane) killMidTransaction(active *harness.Process) {
	t := l.t
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for tries := 1; ; tries++ {
		if err := syscall.Kill(active.PID(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		ends, err1 := adm.ListEndOffsets(ctx, l.topic)
		stable, err2 := adm.ListCommittedOffsets(ctx, l.topic)
		open := 0
		if err1 == nil && err2 == nil {
			ends.Each(func(o kadm.ListedOffset) {
				if s, ok := stable.Lookup(o.Topic, o.Partition); ok && o.Offset > s.Offset {
					open += int(o.Offset - s.Offset)
				}
			})
		}
		if open > 0 {
			if err := active.Kill(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s SIGKILLed on try %d with %d offsets of the events topic in its open transaction", active.Name, tries, open)
			return
		}
		if err := syscall.Kill(active.PID(), syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s had no open transaction to be killed in after %d tries (%v %v)", active.Name, tries, err1, err2)
		}
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
	}
}

// read is one record as a reader printed it.
type read struct {
	Key       string `json:"key"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	PartnerID string `json:"partner_id"`
	Value     string `json:"-"`
}

func asRecords(rs []read) []*kgo.Record {
	out := make([]*kgo.Record, len(rs))
	for i, r := range rs {
		out[i] = &kgo.Record{Key: []byte(r.Key)}
	}
	return out
}

func keys(rs []read) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key
	}
	return out
}

// kcat runs kcat to the end of the partitions it reads (-e), JSON out (-J), and returns the
// records.
func (l *lane) kcat(name string, args ...string) []read {
	t := l.t
	t.Helper()
	all := append([]string{"-C", "-b", strings.Join(l.brokers, ","), "-t", l.topic, "-e", "-J", "-q"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "kcat", all...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(all, " "), err, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(l.logs, name+".jsonl"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	var rs []read
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			Partition int32    `json:"partition"`
			Offset    int64    `json:"offset"`
			Key       string   `json:"key"`
			Payload   string   `json:"payload"`
			Headers   []string `json:"headers"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("kcat printed %q: %v", sc.Text(), err)
		}
		r := read{Key: m.Key, Partition: m.Partition, Offset: m.Offset, Value: m.Payload}
		for i := 0; i+1 < len(m.Headers); i += 2 {
			if m.Headers[i] == "partner_id" {
				r.PartnerID = m.Headers[i+1]
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// py runs testdata/read_log.py with args and returns the records it printed.
func (l *lane) py(name string, args ...string) (rs []read, cursor map[string]int64) {
	t := l.t
	t.Helper()
	all := append([]string{"testdata/read_log.py", filepath.Join(l.repo, "docs/consuming-the-log.md")}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout+time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, l.python, all...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	_ = os.WriteFile(filepath.Join(l.logs, name+".jsonl"), out, 0o644)
	if err != nil {
		t.Fatalf("python %s: %v\n%s", strings.Join(all, " "), err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line struct {
			read
			Cursor map[string]int64 `json:"cursor"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("read_log.py printed %q: %v", sc.Text(), err)
		}
		if line.Cursor != nil {
			cursor = line.Cursor
			continue
		}
		rs = append(rs, line.read)
	}
	return rs, cursor
}

// only keeps the records of partner p.
func only(rs []read, p string) []read {
	var out []read
	for _, r := range rs {
		if r.PartnerID == p {
			out = append(out, r)
		}
	}
	return out
}

func (l *lane) exact(what string, rs []read, ids []string) {
	t := l.t
	t.Helper()
	c := harness.CountKeys(asRecords(rs), ids)
	t.Logf("%s: %s; %d events committed", what, c, len(ids))
	if !c.Exact() {
		t.Errorf("%s does not hold every committed event exactly once and nothing else: %s", what, c)
	}
}

// Data teams read the event log with their own tools (docs/consuming-the-log.md): while a client
// commits events and the active cdc is SIGKILLed mid-transaction twice (a standby taking over
// each time), kcat with read_committed, the doc's Python consumer and the Connect JDBC sink's
// table each hold every committed event exactly once and nothing else, while a
// read_uncommitted kcat sees the aborted copies the doc warns about. One partner read by the
// doc's partition formula (kcat -p and the Python snippet) is its events in commit order, and a
// reader started from a feed cursor, decoded as the doc says, continues the feed exactly.
func TestDataTeamsReadTheLog(t *testing.T) {
	l := newLane(t)
	ctx := context.Background()
	l.startConnect()
	l.start("admin", "admin")
	for _, p := range partners {
		if err := l.admin.CreatePartner(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	procs := map[string]*harness.Process{}
	probes := map[string]string{}
	for _, id := range []string{"cdc-1", "cdc-2"} {
		procs[id], probes[id] = l.start("cdc", id)
	}
	activeOf := func(ids ...string) string {
		deadline := time.Now().Add(takeoverBound)
		for {
			for _, id := range ids {
				if cdcActive(probes[id]) {
					return id
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("none of %v became the active cdc within %s", ids, takeoverBound)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	active := activeOf("cdc-1", "cdc-2")
	testenv.WaitSlotStreaming(t, l.db.Pool, l.db.Name, startTimeout)

	gen, err := harness.NewGenerator(l.db.Pool, 1, func(n int64) outbox.Event { return harness.NewEvent(partners[n%int64(len(partners))], n) })
	if err != nil {
		t.Fatal(err)
	}
	// The load runs in 2-second rounds until both kills are done and the survivor has streamed
	// a while after the second.
	stopLoad := make(chan struct{})
	loaded := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stopLoad:
				loaded <- nil
				return
			default:
			}
			if _, err := gen.SteadyFor(ctx, loadRate, 2*time.Second); err != nil {
				loaded <- err
				return
			}
		}
	}()
	standbys := []string{"cdc-1", "cdc-2"}
	for kill, next := range []string{"cdc-3", "cdc-4"} {
		time.Sleep(6 * time.Second)
		l.killMidTransaction(procs[active])
		killed := time.Now()
		standbys = slices.DeleteFunc(standbys, func(id string) bool { return id == active })
		active = activeOf(standbys...)
		t.Logf("kill %d: %s active %s after the SIGKILL", kill+1, active, time.Since(killed).Round(10*time.Millisecond))
		procs[next], probes[next] = l.start("cdc", next)
		standbys = append(standbys, next)
	}
	time.Sleep(5 * time.Second)
	close(stopLoad)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	all, byPartner := l.db.OutboxInCommitOrder(l.t)
	t.Logf("%d events committed, %d of partner %s", len(all), len(byPartner[partner]), partner)

	// Everything committed is in the log once the franz-go read_committed reader has it all.
	published, err := harness.ReadTopic(ctx, l.brokers, l.topic, len(all), time.Second, drainTimeout)
	if c := harness.CountKeys(published, all); err != nil || !c.Exact() {
		t.Fatalf("events topic (franz-go, read_committed): %s (%v)", c, err)
	}

	committedRead := l.kcat("kcat-read-committed", "-X", "isolation.level=read_committed", "-o", "beginning")
	l.exact("kcat read_committed", committedRead, all)

	uncommitted := l.kcat("kcat-read-uncommitted", "-X", "isolation.level=read_uncommitted", "-o", "beginning")
	uc := harness.CountKeys(asRecords(uncommitted), all)
	t.Logf("kcat read_uncommitted: %s (aborted copies: %d records)", uc, len(uncommitted)-len(all))
	if uc.Missing > 0 || uc.Unknown > 0 || uc.Duplicated == 0 || len(uncommitted) <= len(all) {
		t.Errorf("read_uncommitted: want every committed event plus aborted copies of some, got %s", uc)
	}

	pyAll, _ := l.py("python-all", "all", strings.Join(l.brokers, ","), l.topic)
	l.exact("python confluent-kafka read_committed", pyAll, all)

	l.checkTable(all, committedRead)

	// One partner by the doc's formula: kcat -p with the partition the doc's Python function
	// gives (cross-checked with outbox.PartitionFor), and the doc's Python consumer.
	want := byPartner[partner]
	p, err := outbox.PartitionFor(partner, partitions)
	if err != nil {
		t.Fatal(err)
	}
	docP := l.docPartition(partner, partitions)
	if docP != p {
		t.Fatalf("the doc's partition_for(%q, %d) = %d, outbox.PartitionFor = %d", partner, partitions, docP, p)
	}
	kp := only(l.kcat("kcat-partner", "-X", "isolation.level=read_committed", "-p", fmt.Sprint(p), "-o", "beginning"), partner)
	if got := keys(kp); !slices.Equal(got, want) {
		t.Errorf("kcat -p %d: %d events of %s, not its %d committed in commit order", p, len(got), partner, len(want))
	}
	pp, _ := l.py("python-partner", "partner", strings.Join(l.brokers, ","), l.topic, partner, fmt.Sprint(len(want)))
	if got := keys(pp); !slices.Equal(got, want) {
		t.Errorf("the doc's Python consumer: %d events of %s, not its %d committed in commit order", len(got), partner, len(want))
	}

	l.checkCursor(p, want)
}

// docPartition runs the doc's Python partition_for.
func (l *lane) docPartition(p string, n int) int32 {
	t := l.t
	t.Helper()
	script := `import sys, importlib.util
spec = importlib.util.spec_from_file_location("read_log", "testdata/read_log.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
env = {}
exec(next(b for b in m.snippets(sys.argv[1]) if "def partition_for" in b), env)
print(env["partition_for"](sys.argv[2], int(sys.argv[3])))`
	out, err := exec.Command(l.python, "-c", script, filepath.Join(l.repo, "docs/consuming-the-log.md"), p, fmt.Sprint(n)).CombinedOutput()
	if err != nil {
		t.Fatalf("the doc's partition_for: %v\n%s", err, out)
	}
	var got int32
	if _, err := fmt.Sscan(string(out), &got); err != nil {
		t.Fatalf("the doc's partition_for printed %q", out)
	}
	return got
}

// checkTable waits for the Connect JDBC sink's table to hold as many rows as events were
// committed, then holds it to them: each event id once, nothing else, each row the record
// read_committed kcat read for that id (partition, offset, envelope bytes, partner).
func (l *lane) checkTable(all []string, committedRead []read) {
	t := l.t
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(drainTimeout)
	var n int
	for {
		err := l.db.Pool.QueryRow(ctx, `SELECT count(*) FROM hookstream_events`).Scan(&n)
		if err == nil && n >= len(all) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Connect JDBC sink's table has %d rows (%v), want %d, after %s:\n%s", n, err, len(all), drainTimeout,
				harness.TailFile(filepath.Join(l.logs, "connect", "logs", "connect.log"), 30))
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a late extra row would show
	rows, err := l.db.Pool.Query(ctx, `SELECT event_id, envelope, partner_id, kafka_partition, kafka_offset FROM hookstream_events`)
	if err != nil {
		t.Fatal(err)
	}
	var table []read
	var r read
	if _, err := pgx.ForEachRow(rows, []any{&r.Key, &r.Value, &r.PartnerID, &r.Partition, &r.Offset}, func() error {
		table = append(table, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	l.exact("Connect JDBC sink table hookstream_events", table, all)
	byID := map[string]read{}
	for _, r := range committedRead {
		byID[r.Key] = r
	}
	wrong := 0
	for _, row := range table {
		if k, ok := byID[row.Key]; ok && k != row {
			if wrong++; wrong <= 3 {
				t.Errorf("table row %+v is not the committed record %+v", row, k)
			}
		}
	}
}

// checkCursor reads part of the partner's feed, decodes its next_cursor with the doc's
// cursor_position, and starts kcat and the doc's Python consumer there: the feed's events and
// the reader's together are the partner's events in commit order, no gap, no duplicate.
func (l *lane) checkCursor(p int32, want []string) {
	t := l.t
	t.Helper()
	ctx := context.Background()
	var fed []string
	cursor := ""
	for len(fed) < len(want)/2 {
		var page struct {
			Data []struct {
				EventID string `json:"event_id"`
			} `json:"data"`
			NextCursor string `json:"next_cursor"`
		}
		path := "/v1/partners/" + partner + "/events?limit=100"
		if cursor != "" {
			path += "&after=" + url.QueryEscape(cursor)
		}
		if err := l.admin.Call(ctx, "GET", path, nil, 200, &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			fed = append(fed, e.EventID)
		}
		cursor = page.NextCursor
	}
	if !slices.Equal(fed, want[:len(fed)]) {
		t.Fatalf("the feed's first %d events are not the partner's first in commit order", len(fed))
	}
	rest := want[len(fed):]
	pr, pos := l.py("python-cursor", "partner", strings.Join(l.brokers, ","), l.topic, partner, fmt.Sprint(len(rest)), cursor)
	t.Logf("feed: %d events, then a cursor at partition %d offset %d (of %d partitions); %d events after it",
		len(fed), pos["partition"], pos["offset"], pos["partitions"], len(rest))
	if pos["partition"] != int64(p) || pos["partitions"] != partitions {
		t.Fatalf("the cursor decoded by the doc's cursor_position is %v, want partition %d of %d", pos, p, partitions)
	}
	if got := keys(pr); !slices.Equal(got, rest) {
		t.Errorf("the doc's Python consumer from the cursor: %d events, not the %d after the feed's in commit order", len(got), len(rest))
	}
	kr := only(l.kcat("kcat-cursor", "-X", "isolation.level=read_committed", "-p", fmt.Sprint(p), "-o", fmt.Sprint(pos["offset"])), partner)
	if got := keys(kr); !slices.Equal(got, rest) {
		t.Errorf("kcat -p %d -o %d: %d events, not the %d after the feed's in commit order", p, pos["offset"], len(got), len(rest))
	}
}
