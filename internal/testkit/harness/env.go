package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/scratch"
)

// Installation is what every process of one hookstream installation shares: its database,
// brokers, topic prefix, cdc slot, secret key and operator token.
type Installation struct {
	DatabaseURL   string
	Brokers       []string
	Prefix        string
	Partitions    int
	Slot          string
	AdminAddr     string // 127.0.0.1:port
	AdminToken    string
	RetrySchedule string // HOOKSTREAM_RETRY_SCHEDULE; empty: the default
}

// NewAdminToken is a fresh operator token.
func NewAdminToken() string { return "hst_bench_" + scratch.RandomHex(24) }

// Vars is the configuration every process of the installation shares, with a fresh secret key:
// loopback HTTP receivers on unprivileged ports are allowed, logs are JSON.
func (in Installation) Vars() (map[string]string, error) {
	key, err := secretbox.GenerateKey()
	if err != nil {
		return nil, err
	}
	vars := map[string]string{
		"HOOKSTREAM_DATABASE_URL":       in.DatabaseURL,
		"HOOKSTREAM_KAFKA_BROKERS":      strings.Join(in.Brokers, ","),
		"HOOKSTREAM_TOPIC_PREFIX":       in.Prefix,
		"HOOKSTREAM_TOPIC_PARTITIONS":   fmt.Sprint(in.Partitions),
		"HOOKSTREAM_SECRET_KEY":         key,
		"HOOKSTREAM_ADMIN_TOKEN":        in.AdminToken,
		"HOOKSTREAM_ADMIN_ADDR":         in.AdminAddr,
		"HOOKSTREAM_ALLOW_HTTP":         "true",
		"HOOKSTREAM_EGRESS_ALLOW_CIDRS": "127.0.0.0/8",
		"HOOKSTREAM_EGRESS_ALLOW_PORTS": "1024-65535",
		"HOOKSTREAM_CDC_SLOT":           in.Slot,
		"HOOKSTREAM_LOG_FORMAT":         "json",
	}
	if in.RetrySchedule != "" {
		vars["HOOKSTREAM_RETRY_SCHEDULE"] = in.RetrySchedule
	}
	return vars, nil
}

// Environ is this program's environment without any HOOKSTREAM_* variable, plus vars.
func Environ(vars map[string]string) []string {
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

// NewPool opens a pool of size connections on url.
func NewPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
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

// WaitReady polls url until it answers 200, the process exits, or timeout passes.
func WaitReady(ctx context.Context, p *Process, url string, timeout time.Duration) error {
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
		if done, perr := p.Exited(); done {
			return fmt.Errorf("%s exited (%v) before it was ready:\n%s", p.Name, perr, p.LogTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s after %s (%v):\n%s", p.Name, url, timeout, err, p.LogTail())
		}
		if err := Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// WaitGroups waits until every consumer group is stable with members, or timeout passes.
func WaitGroups(ctx context.Context, brokers, groups []string, timeout time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(timeout)
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
			return fmt.Errorf("consumer groups not stable after %s: %s (%v)", timeout, strings.Join(pending, ", "), err)
		}
		if err := Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// DeleteKafkaPrefix deletes the topics and consumer groups under prefix: a shared broker must
// not keep every run's partitions (each holds file descriptors).
func DeleteKafkaPrefix(brokers []string, prefix string) error {
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

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
