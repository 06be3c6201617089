package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/testkit/benchenv"
	"github.com/hookstream/hookstream/internal/testkit/harness"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
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
	admin   *harness.AdminClient
	// metricsURLs are every process's /metrics.
	metricsURLs []string
	procs       []*harness.Process
	devDir      string
	dbName      string
	dropDB      func()
	// serverDeadlocks is what PostgreSQL counted in the database once every process stopped
	// (scratch.Deadlocks); serverDeadlocksErr says why it could not be read.
	serverDeadlocks    int64
	serverDeadlocksErr error
	stopOnce           sync.Once
	stopErr            error
}

// envSpec says which environment to start.
type envSpec struct {
	run           int
	mode          string
	workload      string
	retrySchedule string            // HOOKSTREAM_RETRY_SCHEDULE; empty: the default
	vars          map[string]string // the workload's own variables of every process; -set wins
}

// startEnv sets up a fresh environment and waits until it streams: every process ready, the
// cdc slot at its consistent point, and the consumer groups of fanout, sender and recorder
// stable. On error whatever was started is stopped again.
func startEnv(ctx context.Context, o options, spec envSpec) (started *env, err error) {
	dbName := dbPrefix + scratch.RandomHex(5)
	e := &env{name: fmt.Sprintf("run%d-%s-%s", spec.run, spec.mode, spec.workload), mode: spec.mode, o: o,
		slot: dbName, prefix: "e2e" + scratch.RandomHex(4)}
	defer func() {
		if err != nil {
			if serr := e.stop(); serr != nil {
				err = errors.Join(err, serr)
			}
			started, err = nil, fmt.Errorf("environment %s: %w", e.name, err)
		}
	}()
	url, err := scratch.MigratedDatabase(ctx, o.databaseURL, dbName)
	if err != nil {
		return e, fmt.Errorf("database: %w", err)
	}
	e.dbName, e.dropDB = dbName, func() { _ = scratch.DropDatabase(o.databaseURL, dbName) }
	// The benchmark's sessions carry a name of their own, so the CPU split tells the
	// publisher's commits from hookstream's sessions (named by hookstream itself).
	if e.pool, err = harness.NewPool(ctx, withApplicationName(url, benchApplicationName), o.clients+4); err != nil {
		return e, err
	}
	vars, err := e.baseVars(url, spec)
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
	if err := scratch.WaitSlotStreaming(ctx, e.pool, e.slot, o.startTimeout); err != nil {
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
		_ = scratch.DropDatabase(server, name)
	}
	return names, nil
}

// baseVars is the configuration every process of the environment shares.
func (e *env) baseVars(dbURL string, spec envSpec) (map[string]string, error) {
	adminPort, err := benchenv.FreePort()
	if err != nil {
		return nil, err
	}
	adminAddr := fmt.Sprintf("127.0.0.1:%d", adminPort)
	token := harness.NewAdminToken()
	e.admin = harness.NewAdminClient("http://"+adminAddr, token)
	e.metricsURLs = append(e.metricsURLs, "http://"+adminAddr+"/metrics")
	vars, err := harness.Installation{DatabaseURL: dbURL, Brokers: e.o.brokers, Prefix: e.prefix, Partitions: e.o.partitions,
		Slot: e.slot, AdminAddr: adminAddr, AdminToken: token, RetrySchedule: spec.retrySchedule}.Vars()
	if err == nil && e.o.logLevel != "" {
		vars["HOOKSTREAM_LOG_LEVEL"] = e.o.logLevel
	}
	if err == nil {
		maps.Copy(vars, spec.vars)
		maps.Copy(vars, e.o.set)
	}
	return vars, err
}

// logDir holds the environment's process logs and its timeline.csv.
func (e *env) logDir() string { return filepath.Join(e.o.out, "logs", e.name) }

func (e *env) logPath(component string) string {
	return filepath.Join(e.logDir(), component+".log")
}

// startSeparate runs migrate and topics create, then every component as its own process, each
// with its own probe and metrics address, and waits for every /readyz.
func (e *env) startSeparate(ctx context.Context, vars map[string]string) error {
	e.brokers = e.o.brokers
	for _, args := range [][]string{{"migrate"}, {"topics", "create"}} {
		if err := harness.RunToEnd(ctx, e.o.bin, args, harness.Environ(vars), e.logPath(args[0]), 2*time.Minute); err != nil {
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
		p, err := harness.StartProcess(c, e.o.bin, []string{c}, harness.Environ(vars), e.logPath(c))
		if err != nil {
			return err
		}
		e.procs = append(e.procs, p)
		probe := "http://" + metricsAddr
		if c == "admin" {
			// Given a metrics address, admin serves /metrics there and no longer on the API's.
			e.metricsURLs = slices.DeleteFunc(e.metricsURLs, func(u string) bool { return u == e.admin.Base+"/metrics" })
		}
		e.metricsURLs = append(e.metricsURLs, probe+"/metrics")
		if err := harness.WaitReady(ctx, p, probe+"/readyz", e.o.startTimeout); err != nil {
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
	rport, err := benchenv.FreePort()
	if err != nil {
		return err
	}
	vars["HOOKSTREAM_RESELLER_ADDR"] = fmt.Sprintf("127.0.0.1:%d", rport)
	delete(vars, "HOOKSTREAM_KAFKA_BROKERS")
	p, err := harness.StartProcess("dev", e.o.bin, []string{"dev"}, harness.Environ(vars), e.logPath("dev"))
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	return harness.WaitReady(ctx, p, e.admin.Base+"/readyz", e.o.startTimeout)
}

// waitGroups waits until the consumer groups of fanout, sender and recorder are stable with
// members, so the first events of a workload do not wait for a group join.
func (e *env) waitGroups(ctx context.Context) error {
	groups := []string{e.prefix + ".fanout", e.prefix + ".sender", e.prefix + ".recorder"}
	return harness.WaitGroups(ctx, e.brokers, groups, e.o.startTimeout)
}

// stop ends the environment: processes first (SIGTERM, SIGKILL after the grace), then its
// topics and groups on the real broker, its database and slot, and dev's data directory.
func (e *env) stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		if err := harness.StopAll(e.procs, e.o.stopGrace); err != nil {
			errs = append(errs, err)
		}
		if e.pool != nil {
			e.pool.Close()
		}
		if e.mode == modeSeparate && len(e.brokers) > 0 {
			if err := harness.DeleteKafkaPrefix(e.brokers, e.prefix); err != nil {
				errs = append(errs, err)
			}
		}
		if e.dropDB != nil {
			// Before the database goes: PostgreSQL's own count of the deadlocks it detected
			// there, whatever the processes logged (at any log level).
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			e.serverDeadlocks, e.serverDeadlocksErr = scratch.Deadlocks(ctx, e.o.databaseURL, e.dbName, 10*time.Second)
			cancel()
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

// withApplicationName is the database URL rawURL with its application_name set to name.
func withApplicationName(rawURL, name string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return rawURL // the pool reports the bad URL
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}
