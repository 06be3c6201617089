// Package testenv gives integration tests their real services: a fresh PostgreSQL database built
// from the migrated schema, and a Kafka cluster (a real broker or the embedded kfake one) with a
// topic prefix of their own, so tests never see each other's data.
//
// The services are named by environment variables, as pgx and franz-go do for their own tests:
//
//	HOOKSTREAM_TEST_DATABASE_URL  a PostgreSQL URL whose user may create databases (make pg-up)
//	HOOKSTREAM_TEST_KAFKA         "embedded" for in-process kfake, or a broker list (make kafka-up)
//
// A test that needs a service whose variable is unset fails and says which make target provides
// it; it never skips.
package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/commalist"
	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/embeddedkafka"
	"github.com/hookstream/hookstream/internal/migrations"
	"github.com/hookstream/hookstream/internal/testkit/localinfra"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/outbox"
)

const (
	// DatabaseVar names the PostgreSQL server for integration tests.
	DatabaseVar = "HOOKSTREAM_TEST_DATABASE_URL"
	// KafkaVar names the Kafka for integration tests: "embedded" or a comma-separated broker list.
	KafkaVar = "HOOKSTREAM_TEST_KAFKA"
)

// templateLock serialises template building across test processes ("hstmpl").
const templateLock int64 = 0x6873746d706c

// ServerURL returns the PostgreSQL URL of the test server, or fails t.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(DatabaseVar)
	if u == "" {
		t.Fatalf("%s is not set: run `make pg-up` and `export %s=$(deploy/local/pg.sh url)`, or run everything with `make test`", DatabaseVar, DatabaseVar)
	}
	return u
}

// Database is a fresh database holding the current schema, dropped when the test ends.
type Database struct {
	Name string
	URL  string
	Pool *pgxpool.Pool
}

// NewPool opens a pool of its own on url (another process's, or one through a Proxy), closed
// when the test ends.
func NewPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// UnreachablePool is a pool on a server that is not there: pgxpool connects lazily, so it serves
// tests of what a component decides before any query, and a query fails within a second.
func UnreachablePool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return NewPool(t, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
}

// Exec runs one statement on the database and fails t when it returns an error.
func (d *Database) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := d.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// Partners creates the partners ids that do not exist yet. The outbox refuses an event of a
// partner the partner table does not hold (migration 0021), so a test creates its partners
// first, as the admin API does for a deployment.
func (d *Database) Partners(t testing.TB, ids ...string) {
	t.Helper()
	d.Exec(t, `INSERT INTO partner (id) SELECT unnest($1::text[]) ON CONFLICT (id) DO NOTHING`, ids)
}

// OutboxInCommitOrder returns every event id of the outbox in the order of its transactions'
// ids (xmin), and each partner's: with one committing client, the order cdc must publish.
func (d *Database) OutboxInCommitOrder(t testing.TB) (all []string, byPartner map[string][]string) {
	t.Helper()
	rows, err := d.Pool.Query(context.Background(), `SELECT event_id, partner_id FROM outbox_event ORDER BY xmin::text::bigint, event_id`)
	if err != nil {
		t.Fatal(err)
	}
	byPartner = map[string][]string{}
	var id, partner string
	if _, err := pgx.ForEachRow(rows, []any{&id, &partner}, func() error {
		all = append(all, id)
		byPartner[partner] = append(byPartner[partner], id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return all, byPartner
}

// WithoutOutboxChecks runs f with the outbox's row checks (trigger outbox_event_accept_row,
// migrations 0013 to 0023) disabled on this database, then enables them again: rows f writes
// stand for rows committed before those checks, e.g. an event far in the past that sits in the
// default partition. Their ids are claimed all the same (migration 0008's outbox_claim_event_id,
// in a trigger of its own while f runs).
func (d *Database) WithoutOutboxChecks(t testing.TB, f func()) {
	t.Helper()
	d.Exec(t, `ALTER TABLE outbox_event DISABLE TRIGGER outbox_event_accept_row`)
	d.Exec(t, `CREATE TRIGGER outbox_event_claim_only BEFORE INSERT ON outbox_event
		FOR EACH ROW EXECUTE FUNCTION outbox_claim_event_id()`)
	defer d.Exec(t, `ALTER TABLE outbox_event ENABLE TRIGGER outbox_event_accept_row`)
	defer d.Exec(t, `DROP TRIGGER outbox_event_claim_only ON outbox_event`)
	f()
}

// SeedOutbox writes n events of partner pid and type typ to the outbox in one statement (a
// customer subject each, payload {"customer_id", "n"}) and returns their ids in order. It
// creates the partner when it does not exist.
func (d *Database) SeedOutbox(t testing.TB, pid, typ string, n int) []string {
	t.Helper()
	d.Partners(t, pid)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = outbox.NewEventID()
	}
	d.Exec(t, `INSERT INTO outbox_event
		(event_id, partner_id, type, subject_type, subject_id, occurred_at, schema_version, payload)
		SELECT u.id, $2, $3, 'customer', 'cus_' || u.n, now(), 1, jsonb_build_object('customer_id', 'cus_' || u.n, 'n', u.n)
		FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)`, ids, pid, typ)
	return ids
}

// AppendEvent commits ev with outbox.Append in a transaction of its own, as an application
// does, and returns its id; an error fails t. It creates ev's partner when it does not exist.
func (d *Database) AppendEvent(ctx context.Context, t testing.TB, ev outbox.Event, opts ...outbox.AppendOption) string {
	t.Helper()
	if ev.PartnerID != "" {
		d.Partners(t, ev.PartnerID)
	}
	var id string
	if err := pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
		var err error
		id, err = outbox.Append(ctx, tx, ev, opts...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// NewDatabase creates a database from a template that holds the migrated schema.
func NewDatabase(t testing.TB) *Database {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := ensureTemplate(ctx, ServerURL(t))
	if err != nil {
		t.Fatalf("testenv: schema template: %v", err)
	}
	return createDatabase(t, tmpl)
}

// NewEmptyDatabase creates a database without hookstream's schema, for tests of migrating.
func NewEmptyDatabase(t testing.TB) *Database {
	t.Helper()
	return createDatabase(t, "")
}

// createDatabase creates a database for t, a copy of template unless it is empty, dropped with
// any replication slot a test left on it when the test ends.
func createDatabase(t testing.TB, template string) *Database {
	t.Helper()
	server := ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, swept := sweptServers.LoadOrStore(server, true); !swept {
		sweepStale(ctx, server, time.Now())
	}
	name := testDatabaseName(time.Now())
	url, err := scratch.CreateDatabase(ctx, server, name, template)
	if err != nil {
		t.Fatalf("testenv: %s: %v", DatabaseVar, err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatalf("testenv: pool: %v", err)
	}
	db := &Database{Name: name, URL: url, Pool: pool}
	t.Cleanup(func() {
		pool.Close()
		if err := scratch.DropDatabase(server, name); err != nil {
			t.Errorf("testenv: %v", err)
		}
	})
	return db
}

// A test database's name holds its creation time, so that one a killed test process never
// dropped is found later: with a replication slot left on it, the server keeps every WAL segment
// from then on (three such slots once held 39 GB and filled a contributor's disk). The first
// database a test process creates on a server drops those older than staleAfter, far longer than
// any test run, with their slots.
const staleAfter = 6 * time.Hour

var sweptServers sync.Map // server URL → true once this process swept it

func testDatabaseName(now time.Time) string {
	return fmt.Sprintf("hst_t%d_%s", now.Unix(), scratch.RandomHex(8))
}

// testDatabaseCreated is when a database named by testDatabaseName was created; false for any
// other name (a template, a benchmark's database, one of an older test kit).
func testDatabaseCreated(name string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, "hst_t")
	if !ok {
		return time.Time{}, false
	}
	secs, _, ok := strings.Cut(rest, "_")
	if !ok {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// sweepStale drops the test databases of server created more than staleAfter before now, with
// their replication slots, and returns those it dropped; one it cannot drop is the next sweep's.
func sweepStale(ctx context.Context, server string, now time.Time) []string {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return nil
	}
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'hst\_t%'`)
	if err != nil {
		conn.Close(ctx)
		return nil
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	conn.Close(ctx)
	if err != nil {
		return nil
	}
	var dropped []string
	for _, name := range names {
		if created, ok := testDatabaseCreated(name); ok && now.Sub(created) > staleAfter {
			if scratch.DropDatabase(server, name) == nil {
				dropped = append(dropped, name)
			}
		}
	}
	return dropped
}

var templateOnce sync.Map // server URL → template name, once built in this process

// ensureTemplate builds, once per schema fingerprint, a database holding every migration, so each
// test copies a finished schema instead of migrating from scratch.
func ensureTemplate(ctx context.Context, server string) (string, error) {
	fp, err := migrations.Fingerprint()
	if err != nil {
		return "", err
	}
	name := "hst_template_" + fp
	if v, ok := templateOnce.Load(server); ok && v.(string) == name {
		return name, nil
	}
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", fmt.Errorf("connect %s: %w", DatabaseVar, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", err
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, templateLock) //nolint:errcheck

	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		// Build under a scratch name and rename when done: a crash half-way leaves no template
		// that looks finished.
		wip := name + "_wip"
		if _, err := conn.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, wip)); err != nil {
			return "", err
		}
		if _, err := scratch.MigratedDatabase(ctx, server, wip); err != nil {
			return "", err
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s RENAME TO %s`, wip, name)); err != nil {
			return "", err
		}
	}
	templateOnce.Store(server, name)
	return name, nil
}

// Kafka is a cluster for one test, with a topic prefix no other test uses.
type Kafka struct {
	Lane    string // "embedded" or "real"
	Brokers []string
	Prefix  string

	stop, start func(t testing.TB) // set by NewRestartableKafka
}

// NewKafka returns the test Kafka named by HOOKSTREAM_TEST_KAFKA: a fresh embedded cluster
// closed when the test ends, or the real broker list.
func NewKafka(t testing.TB) *Kafka {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(KafkaVar))
	k := &Kafka{Prefix: "t" + scratch.RandomHex(6)}
	switch v {
	case "":
		t.Fatalf("%s is not set: set it to \"embedded\" for in-process kfake, or run `make kafka-up` and set it to 127.0.0.1:19092; `make test` runs both", KafkaVar)
	case "embedded":
		c, err := embeddedkafka.Start(embeddedkafka.Config{})
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		t.Cleanup(c.Close)
		k.Lane, k.Brokers = "embedded", c.Brokers()
	default:
		k.Lane = "real"
		k.Brokers = commalist.Split(v)
		// A shared broker must not keep every test's topics: each partition holds file
		// descriptors, and a full run would exhaust the broker's limit.
		t.Cleanup(func() { k.deleteTopics(t) })
	}
	return k
}

// deleteTopics deletes every topic under the test's prefix.
func (k *Kafka) deleteTopics(t testing.TB) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		t.Logf("testenv: list topics for cleanup: %v", err)
		return
	}
	var mine []string
	for name := range listed {
		if strings.HasPrefix(name, k.Prefix+".") {
			mine = append(mine, name)
		}
	}
	if len(mine) == 0 {
		return
	}
	if _, err := adm.DeleteTopics(ctx, mine...); err != nil {
		t.Logf("testenv: delete topics %s.*: %v", k.Prefix, err)
	}
}

// NewRestartableKafka returns a cluster of the test's own that Restart can stop and start again
// with its data: in the embedded lane a kfake cluster persisted to a temporary directory, in the
// real lane a private Apache Kafka broker started by deploy/kafka/kafka.sh on free ports (so
// restarting it disturbs no other test).
func NewRestartableKafka(t testing.TB) *Kafka {
	t.Helper()
	shared := NewKafka(t) // checks the variable and picks the lane
	k := &Kafka{Lane: shared.Lane, Prefix: shared.Prefix}
	dir := t.TempDir()
	if k.Lane == "embedded" {
		cfg := embeddedkafka.Config{Port: freePortPair(t), DataDir: dir}
		var c *embeddedkafka.Cluster
		startCluster := func(t testing.TB) {
			var err error
			if c, err = embeddedkafka.Start(cfg); err != nil {
				t.Fatalf("testenv: %v", err)
			}
		}
		startCluster(t)
		k.Brokers = c.Brokers()
		k.stop, k.start = func(testing.TB) { c.Close() }, startCluster
		t.Cleanup(func() { c.Close() })
		return k
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	port := freePortPair(t)
	script := func(t testing.TB, action string) {
		cmd := exec.Command("bash", filepath.Join(root, "deploy/kafka/kafka.sh"), action)
		cmd.Env = append(os.Environ(),
			fmt.Sprintf("KAFKA_PORT=%d", port),
			"HOOKSTREAM_DATA_DIR="+dir,
			"KAFKA_LIBS="+filepath.Join(root, ".data/kafka/libs"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("testenv: kafka.sh %s: %v\n%s", action, err, out)
		}
	}
	script(t, "up")
	t.Cleanup(func() { script(t, "down") })
	k.Brokers = []string{fmt.Sprintf("127.0.0.1:%d", port)}
	k.stop = func(t testing.TB) { script(t, "down") }
	k.start = func(t testing.TB) { script(t, "up") }
	return k
}

// Restart stops the cluster and starts it again with its data. Only for NewRestartableKafka.
func (k *Kafka) Restart(t testing.TB) {
	t.Helper()
	k.Stop(t)
	k.Start(t)
}

// Stop stops the cluster, keeping its data, until Start. Only for NewRestartableKafka.
func (k *Kafka) Stop(t testing.TB) {
	t.Helper()
	if k.stop == nil {
		t.Fatal("testenv: Stop needs a cluster from NewRestartableKafka")
	}
	k.stop(t)
}

// Start starts a cluster that Stop stopped, with its data, on the same address.
func (k *Kafka) Start(t testing.TB) {
	t.Helper()
	if k.start == nil {
		t.Fatal("testenv: Start needs a cluster from NewRestartableKafka")
	}
	k.start(t)
}

// FreePort is a loopback port nothing listens on at the moment, for a server the test starts.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// freePortPair finds a port p such that p and p+1 are free (a broker and its controller), below
// the kernel's ephemeral range so that a broker restarted on it finds it free
// (localinfra.FreePorts).
func freePortPair(t testing.TB) int {
	t.Helper()
	p, err := localinfra.FreePorts(2)
	if err != nil {
		t.Fatal("testenv:", err)
	}
	return p
}

// repoRoot finds the module root from the test's working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Client returns a franz-go client for the cluster, closed when the test ends.
func (k *Kafka) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Brokers...)}, opts...)...)
	if err != nil {
		t.Fatalf("testenv: kafka client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Base is what a component under test takes of the cluster: its brokers and the test's topic
// prefix, with the test's Logger and reg (nil: the metrics are not registered).
func (k *Kafka) Base(t testing.TB, reg prometheus.Registerer) component.Base {
	return component.Base{Brokers: k.Brokers, Prefix: k.Prefix, Logger: Logger(t), Registerer: reg}
}

// TopicConfig is the topic configuration under this test's prefix, with few partitions.
func (k *Kafka) TopicConfig() topics.Config {
	c := topics.DefaultConfig()
	c.Prefix = k.Prefix
	c.Partitions = 3
	return c
}

// CreateTopics creates every hookstream topic under the test's prefix and returns their names.
func (k *Kafka) CreateTopics(t testing.TB) topics.Names {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := topics.Ensure(ctx, k.Client(t), k.TopicConfig()); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return topics.For(k.Prefix)
}

// WaitSlotStreaming waits until the logical replication slot is held by a reader and has
// reached its consistent point (scratch.WaitSlotStreaming), or fails t after timeout.
func WaitSlotStreaming(t testing.TB, pool *pgxpool.Pool, slot string, timeout time.Duration) {
	t.Helper()
	if err := scratch.WaitSlotStreaming(context.Background(), pool, slot, timeout); err != nil {
		t.Fatalf("testenv: %v", err)
	}
}
