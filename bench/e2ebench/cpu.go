package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// clockTicks is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on every Linux
// architecture Go supports (sysconf is out of reach without cgo).
const clockTicks = 100

// cpuUse is CPU time (user + system) by party. A party whose processes could not be found is
// negative, and reported as n/a.
type cpuUse struct {
	hookstream, broker, postgres, bench time.Duration
	// byKind splits two parties: hookstream by process (cdc, fanout, ...; dev) and PostgreSQL
	// by what its processes serve (pgKinds). In a sample it holds hookstream's; minus adds
	// PostgreSQL's, from pg.
	byKind map[string]time.Duration
	pg     pgSample
}

// pgSample is PostgreSQL's CPU time by process: the postmaster's own, with that of its children
// that have exited (its cutime and cstime), and each living child's under its kind.
type pgSample struct {
	own      time.Duration
	children map[int]pgChild
}

type pgChild struct {
	kind string
	t    time.Duration
}

// What PostgreSQL's CPU is spent on, by the process (pg_stat_activity) that spends it: the
// benchmark's own commits (the platform's state changes, which any outbox costs), cdc's
// logical decoding (its walsender), hookstream's client connections (the recorder's history
// above all), and the rest (background writers, the postmaster, backends that exited).
const (
	pgPublisher  = "pg_publisher"
	pgWalsender  = "pg_walsender"
	pgHookstream = "pg_hookstream"
	pgOther      = "pg_other"
)

var pgKinds = []string{pgPublisher, pgWalsender, pgHookstream, pgOther}

// benchApplicationName names the benchmark's own PostgreSQL sessions, so that their CPU is told
// apart from hookstream's (whose sessions are hookstream-<command>).
const benchApplicationName = "e2ebench"

// proc is a process of the environment by its name.
type proc struct {
	name string
	pid  int
}

// cpuMeter finds the processes of each party once and reads their CPU time on demand.
type cpuMeter struct {
	hookstream []proc // this environment's processes
	broker     []int  // the Kafka broker's JVM
	postmaster int    // PostgreSQL's postmaster: its children are every postgres process
	pool       *pgxpool.Pool
}

// newCPUMeter finds the broker (its pid file, else every JVM running kafka.Kafka) and the
// postmaster (the parent of a backend of pool; none when PostgreSQL runs elsewhere).
func newCPUMeter(ctx context.Context, hookstream []proc, pool *pgxpool.Pool, kafkaPIDFile string) *cpuMeter {
	m := &cpuMeter{hookstream: hookstream, broker: findBroker(kafkaPIDFile), pool: pool}
	var backend int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err == nil {
		if st, err := readStat(backend); err == nil {
			m.postmaster = st.ppid
		}
	}
	return m
}

// sample reads every party's CPU time now.
func (m *cpuMeter) sample(ctx context.Context) cpuUse {
	u := cpuUse{broker: sumCPU(m.broker), postgres: -1, byKind: map[string]time.Duration{}}
	u.hookstream = -1 // n/a until a process is read
	for _, p := range m.hookstream {
		t := sumCPU([]int{p.pid})
		u.byKind[p.name] += t
		u.hookstream = max(u.hookstream, 0) + t
	}
	if m.postmaster != 0 {
		u.pg, u.postgres = postgresCPU(m.postmaster, m.backendKinds(ctx))
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		u.bench = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return u
}

// backendKinds is the pgKinds kind of each PostgreSQL process pg_stat_activity lists; the
// others count as pgOther.
func (m *cpuMeter) backendKinds(ctx context.Context) map[int]string {
	rows, err := m.pool.Query(ctx, `SELECT pid, backend_type, coalesce(application_name, '') FROM pg_stat_activity`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	kinds := map[int]string{}
	for rows.Next() {
		var (
			pid       int
			typ, name string
		)
		if rows.Scan(&pid, &typ, &name) != nil {
			return nil
		}
		switch {
		case typ == "walsender":
			kinds[pid] = pgWalsender
		case typ != "client backend":
		case name == benchApplicationName:
			kinds[pid] = pgPublisher
		case strings.HasPrefix(name, "hookstream-"):
			kinds[pid] = pgHookstream
		}
	}
	return kinds
}

// minus is the CPU used between before and u.
func (u cpuUse) minus(before cpuUse) cpuUse {
	sub := func(a, b time.Duration) time.Duration {
		if a < 0 || b < 0 {
			return -1
		}
		return a - b
	}
	d := cpuUse{hookstream: sub(u.hookstream, before.hookstream), broker: sub(u.broker, before.broker),
		postgres: sub(u.postgres, before.postgres), bench: sub(u.bench, before.bench), byKind: map[string]time.Duration{}}
	for k, v := range u.byKind {
		d.byKind[k] = sub(v, before.byKind[k])
	}
	if d.postgres >= 0 {
		// By process, not by kind: a backend that started between the two samples counts whole
		// under its kind. One that exited (a walsender replaced, a closed connection) moved its
		// whole life into the postmaster's time, so what it had before is taken from there;
		// subtracting it from its kind instead would leave the kind negative, shown as n/a, and
		// the kinds no longer adding up to PostgreSQL's.
		d.byKind[pgOther] = u.pg.own - before.pg.own
		for pid, c := range u.pg.children {
			t := c.t
			if b, ok := before.pg.children[pid]; ok {
				t -= b.t
			}
			d.byKind[c.kind] += t
		}
		for pid, b := range before.pg.children {
			if _, ok := u.pg.children[pid]; !ok {
				d.byKind[pgOther] -= b.t
			}
		}
	}
	return d
}

// procStat is what the benchmark reads of /proc/<pid>/stat.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime int64 // clock ticks
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces and parentheses; fields follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	n := func(field int) int64 { v, _ := strconv.ParseInt(f[field-3], 10, 64); return v }
	return procStat{ppid: int(n(4)), utime: n(14), stime: n(15), cutime: n(16), cstime: n(17)}, nil
}

func ticks(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }

// sumCPU is the user and system time of pids; -1 when there are none.
func sumCPU(pids []int) time.Duration {
	if len(pids) == 0 {
		return -1
	}
	var total time.Duration
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil {
			total += ticks(st.utime + st.stime)
		}
	}
	return total
}

// postgresCPU is the CPU time of the postmaster, of its children that have exited (its cutime
// and cstime: backends of closed connections) and of its living children, each of those under
// its kind in kinds (pgOther when it has none); and their total, -1 when the postmaster is gone.
func postgresCPU(postmaster int, kinds map[int]string) (pgSample, time.Duration) {
	st, err := readStat(postmaster)
	if err != nil {
		return pgSample{}, -1
	}
	s := pgSample{own: ticks(st.utime + st.stime + st.cutime + st.cstime), children: map[int]pgChild{}}
	total := s.own
	for _, pid := range allPIDs() {
		if c, err := readStat(pid); err == nil && c.ppid == postmaster {
			t := ticks(c.utime + c.stime)
			total += t
			s.children[pid] = pgChild{cmp.Or(kinds[pid], pgOther), t}
		}
	}
	return s, total
}

// findBroker returns the Kafka broker's pid from its pid file, or else every process whose
// command line runs kafka.Kafka.
func findBroker(pidFile string) []int {
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && isKafka(pid) {
			return []int{pid}
		}
	}
	var out []int
	for _, pid := range allPIDs() {
		if isKafka(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func isKafka(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(b, []byte("\x00kafka.Kafka\x00"))
}

// allPIDs lists the processes in /proc.
func allPIDs() []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
