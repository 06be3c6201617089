package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/bench/benchenv"
	"github.com/hookstream/hookstream/internal/secretbox"
)

// Modes: every component its own process on the real broker, or `hookstream dev`.
const (
	modeSeparate = "separate"
	modeDev      = "dev"
)

// components are the long-running commands of mode separate, in start order.
var components = []string{"admin", "cdc", "fanout", "sender", "retry", "recorder"}

// env is one fresh hookstream installation: its own database (and cdc slot of the same name),
// topic prefix, secret key and operator token, with its processes running.
type env struct {
	name    string // run1-separate-a1: also the log directory under -out/logs
	mode    string
	o       options
	slot    string
	prefix  string
	brokers []string // where its topics live: the real broker, or dev's embedded one
	pool    *pgxpool.Pool
	admin   *adminClient
	// metricsURLs are every process's /metrics.
	metricsURLs []string
	procs       []*process
	devDir      string
	dropDB      func()
	stopOnce    sync.Once
	stopErr     error
}

// envSpec says which environment to start.
type envSpec struct {
	run           int
	mode          string
	workload      string
	retrySchedule string // HOOKSTREAM_RETRY_SCHEDULE; empty: the default
}

// startEnv sets up a fresh environment and waits until it streams: every process ready, the
// cdc slot at its consistent point, and the consumer groups of fanout, sender and recorder
// stable. On error whatever was started is stopped again.
func startEnv(ctx context.Context, o options, spec envSpec) (started *env, err error) {
	dbName := dbPrefix + benchenv.RandomHex(5)
	e := &env{name: fmt.Sprintf("run%d-%s-%s", spec.run, spec.mode, spec.workload), mode: spec.mode, o: o,
		slot: dbName, prefix: "e2e" + benchenv.RandomHex(4)}
	defer func() {
		if err != nil {
			if serr := e.stop(); serr != nil {
				err = errors.Join(err, serr)
			}
			started, err = nil, fmt.Errorf("environment %s: %w", e.name, err)
		}
	}()
	url, drop, err := benchenv.Database(ctx, o.databaseURL, dbName)
	if err != nil {
		return e, fmt.Errorf("database: %w", err)
	}
	e.dropDB = drop
	if e.pool, err = newPool(ctx, url, o.clients+4); err != nil {
		return e, err
	}
	vars, err := e.baseVars(url, spec.retrySchedule)
	if err != nil {
		return e, err
	}
	if spec.mode == modeDev {
		err = e.startDev(ctx, vars)
	} else {
		err = e.startSeparate(ctx, vars)
	}
	if err != nil {
		return e, err
	}
	if err := benchenv.WaitSlotStreaming(ctx, e.pool, e.slot, o.startTimeout); err != nil {
		return e, err
	}
	return e, e.waitGroups(ctx)
}

// dbPrefix starts the name of every database (and cdc slot) the benchmark creates.
const dbPrefix = "hstbench_e2e_"

// sweepStale drops what a benchmark killed with SIGKILL left behind: databases of dbPrefix
// with an inactive cdc slot and no connection, which would otherwise hold WAL on the server
// forever. A live environment's slot is always active (its cdc holds it from the moment it
// creates it), so a benchmark running beside this one is never touched.
func sweepStale(ctx context.Context, server string) ([]string, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return nil, fmt.Errorf("sweep stale databases: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT d.datname FROM pg_database d
		WHERE d.datname LIKE $1 || '%'
		  AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)
		  AND EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.database = d.datname)
		  AND NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.database = d.datname AND s.active)`, dbPrefix)
	if err != nil {
		return nil, fmt.Errorf("sweep stale databases: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sweep stale databases: %w", err)
	}
	for _, name := range names {
		benchenv.DropDatabase(server, name)
	}
	return names, nil
}

// newPool opens a pool of size connections on url.
func newPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pool config: %w", err)
	}
	cfg.MaxConns, cfg.MinConns = int32(size), int32(size)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	return pool, nil
}

// baseVars is the configuration every process of the environment shares.
func (e *env) baseVars(dbURL, retrySchedule string) (map[string]string, error) {
	key, err := secretbox.GenerateKey()
	if err != nil {
		return nil, err
	}
	adminPort, err := benchenv.FreePort()
	if err != nil {
		return nil, err
	}
	adminAddr := fmt.Sprintf("127.0.0.1:%d", adminPort)
	token := "hst_bench_" + benchenv.RandomHex(24)
	e.admin = newAdminClient("http://"+adminAddr, token)
	e.metricsURLs = append(e.metricsURLs, "http://"+adminAddr+"/metrics")
	vars := map[string]string{
		"HOOKSTREAM_DATABASE_URL":       dbURL,
		"HOOKSTREAM_KAFKA_BROKERS":      strings.Join(e.o.brokers, ","),
		"HOOKSTREAM_TOPIC_PREFIX":       e.prefix,
		"HOOKSTREAM_TOPIC_PARTITIONS":   fmt.Sprint(e.o.partitions),
		"HOOKSTREAM_SECRET_KEY":         key,
		"HOOKSTREAM_ADMIN_TOKEN":        token,
		"HOOKSTREAM_ADMIN_ADDR":         adminAddr,
		"HOOKSTREAM_ALLOW_HTTP":         "true",
		"HOOKSTREAM_EGRESS_ALLOW_CIDRS": "127.0.0.0/8",
		"HOOKSTREAM_EGRESS_ALLOW_PORTS": "1024-65535",
		"HOOKSTREAM_CDC_SLOT":           e.slot,
		"HOOKSTREAM_LOG_FORMAT":         "json",
	}
	if retrySchedule != "" {
		vars["HOOKSTREAM_RETRY_SCHEDULE"] = retrySchedule
	}
	return vars, nil
}

// environ is this program's environment without any HOOKSTREAM_* variable, plus vars.
func environ(vars map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOOKSTREAM_") {
			out = append(out, kv)
		}
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

func (e *env) logPath(component string) string {
	return filepath.Join(e.o.out, "logs", e.name, component+".log")
}

// startSeparate runs migrate and topics create, then every component as its own process, each
// with its own probe and metrics address, and waits for every /readyz.
func (e *env) startSeparate(ctx context.Context, vars map[string]string) error {
	e.brokers = e.o.brokers
	for _, args := range [][]string{{"migrate"}, {"topics", "create"}} {
		if err := runToEnd(ctx, e.o.bin, args, environ(vars), e.logPath(args[0]), 2*time.Minute); err != nil {
			return err
		}
	}
	for _, c := range components {
		port, err := benchenv.FreePort()
		if err != nil {
			return err
		}
		metricsAddr := fmt.Sprintf("127.0.0.1:%d", port)
		vars["HOOKSTREAM_METRICS_ADDR"] = metricsAddr
		vars["HOOKSTREAM_INSTANCE_ID"] = c + "-" + e.prefix
		p, err := startProcess(c, e.o.bin, []string{c}, environ(vars), e.logPath(c))
		if err != nil {
			return err
		}
		e.procs = append(e.procs, p)
		probe := "http://" + metricsAddr
		if c == "admin" {
			probe = e.admin.base // the admin command serves its probes beside the API
		} else {
			e.metricsURLs = append(e.metricsURLs, probe+"/metrics")
		}
		if err := waitReady(ctx, p, probe+"/readyz", e.o.startTimeout); err != nil {
			return err
		}
	}
	return nil
}

// startDev runs `hookstream dev` on the environment's database with a data directory, embedded
// Kafka port, slot and prefix of its own.
func (e *env) startDev(ctx context.Context, vars map[string]string) error {
	dir, err := os.MkdirTemp("", "e2ebench-dev-")
	if err != nil {
		return fmt.Errorf("dev data directory: %w", err)
	}
	e.devDir = dir
	port, err := benchenv.FreePort()
	if err != nil {
		return err
	}
	e.brokers = []string{fmt.Sprintf("127.0.0.1:%d", port)}
	vars["HOOKSTREAM_DATA_DIR"] = dir
	vars["HOOKSTREAM_DEV_KAFKA_PORT"] = fmt.Sprint(port)
	delete(vars, "HOOKSTREAM_KAFKA_BROKERS")
	p, err := startProcess("dev", e.o.bin, []string{"dev"}, environ(vars), e.logPath("dev"))
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	return waitReady(ctx, p, e.admin.base+"/readyz", e.o.startTimeout)
}

// waitReady polls url until it answers 200, the process exits, or timeout passes.
func waitReady(ctx context.Context, p *process, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if done, perr := p.exited(); done {
			return fmt.Errorf("%s exited (%v) before it was ready:\n%s", p.name, perr, p.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s after %s (%v):\n%s", p.name, url, timeout, err, p.logTail())
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitGroups waits until the consumer groups of fanout, sender and recorder are stable with
// members, so the first events of a workload do not wait for a group join.
func (e *env) waitGroups(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	groups := []string{e.prefix + ".fanout", e.prefix + ".sender", e.prefix + ".recorder"}
	deadline := time.Now().Add(e.o.startTimeout)
	for {
		described, err := adm.DescribeGroups(ctx, groups...)
		var pending []string
		for _, g := range groups {
			d, ok := described[g]
			if err != nil || !ok || d.Err != nil || d.State != "Stable" || len(d.Members) == 0 {
				pending = append(pending, fmt.Sprintf("%s (%s)", g, d.State))
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("consumer groups not stable after %s: %s (%v)", e.o.startTimeout, strings.Join(pending, ", "), err)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// stop ends the environment: processes first (SIGTERM, SIGKILL after the grace), then its
// topics and groups on the real broker, its database and slot, and dev's data directory.
func (e *env) stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		if err := stopAll(e.procs, e.o.stopGrace); err != nil {
			errs = append(errs, err)
		}
		if e.pool != nil {
			e.pool.Close()
		}
		if e.mode == modeSeparate && len(e.brokers) > 0 {
			if err := deleteKafkaPrefix(e.brokers, e.prefix); err != nil {
				errs = append(errs, err)
			}
		}
		if e.dropDB != nil {
			e.dropDB()
		}
		if e.devDir != "" {
			if err := os.RemoveAll(e.devDir); err != nil {
				errs = append(errs, err)
			}
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// deleteKafkaPrefix deletes the topics and consumer groups under prefix: a shared broker must
// not keep every run's partitions (each holds file descriptors).
func deleteKafkaPrefix(brokers []string, prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return fmt.Errorf("kafka cleanup: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("kafka cleanup: list topics: %w", err)
	}
	var topics []string
	for name := range listed {
		if strings.HasPrefix(name, prefix+".") {
			topics = append(topics, name)
		}
	}
	if _, err := adm.DeleteTopics(ctx, topics...); err != nil {
		return fmt.Errorf("kafka cleanup: delete topics of %s: %w", prefix, err)
	}
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("kafka cleanup: list groups: %w", err)
	}
	var mine []string
	for _, g := range groups.Groups() {
		if strings.HasPrefix(g, prefix+".") {
			mine = append(mine, g)
		}
	}
	if len(mine) > 0 {
		_, _ = adm.DeleteGroups(ctx, mine...) // best effort: empty groups expire anyway
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
