package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/endpoints"
	"github.com/hookstream/hookstream/internal/kafkalag"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/retrytopics"
	"github.com/hookstream/hookstream/sender"
)

// runSender is `hookstream sender`: deliveries → signed HTTP requests → attempts. It needs no
// PostgreSQL (R28).
func runSender(ctx context.Context, args []string, out io.Writer) error {
	return runComponent(ctx, "sender", args, out, false, runSenderWith)
}

// secretsAndEgress are what the commands that reach endpoints (admin, sender) read alike: the
// keyring that seals and opens the endpoints' secrets, and the egress policy.
func (s settings) secretsAndEgress() (secretbox.Keyring, egress.Config, error) {
	keys, err := s.keyring()
	if err != nil {
		return keys, egress.Config{}, err
	}
	eg, err := s.egressConfig()
	return keys, eg, err
}

// keyring is the keys of HOOKSTREAM_SECRET_KEY (id "default"), HOOKSTREAM_SECRET_KEYS and the
// file of HOOKSTREAM_SECRET_KEYS_FILE together, the one HOOKSTREAM_SECRET_KEY_ACTIVE names
// sealing (design.md section 4). Its errors name variables and key ids, never keys.
func (s settings) keyring() (secretbox.Keyring, error) {
	var keys []secretbox.NamedKey
	if s.SecretKey != "" || (s.SecretKeys == "" && s.SecretKeysFile == "") {
		key, err := secretbox.ParseKey(s.SecretKey)
		if err != nil {
			if s.SecretKey == "" {
				return secretbox.Keyring{}, fmt.Errorf("HOOKSTREAM_SECRET_KEY: %w (or several keys in HOOKSTREAM_SECRET_KEYS or HOOKSTREAM_SECRET_KEYS_FILE)", err)
			}
			return secretbox.Keyring{}, fmt.Errorf("HOOKSTREAM_SECRET_KEY: %w", err)
		}
		keys = append(keys, secretbox.NamedKey{ID: secretbox.DefaultKeyID, Key: key})
	}
	if s.SecretKeys != "" {
		list, err := secretbox.ParseKeyList(s.SecretKeys)
		if err != nil {
			return secretbox.Keyring{}, fmt.Errorf("HOOKSTREAM_SECRET_KEYS: %w", err)
		}
		keys = append(keys, list...)
	}
	if s.SecretKeysFile != "" {
		b, err := os.ReadFile(s.SecretKeysFile)
		if err != nil {
			return secretbox.Keyring{}, fmt.Errorf("HOOKSTREAM_SECRET_KEYS_FILE: %w", err)
		}
		list, err := secretbox.ParseKeyList(string(b))
		if err != nil {
			return secretbox.Keyring{}, fmt.Errorf("HOOKSTREAM_SECRET_KEYS_FILE %s: %w", s.SecretKeysFile, err)
		}
		keys = append(keys, list...)
	}
	ring, err := secretbox.NewKeyring(s.SecretKeyActive, keys)
	if err != nil {
		return ring, fmt.Errorf("secret keys (HOOKSTREAM_SECRET_KEY, HOOKSTREAM_SECRET_KEYS, HOOKSTREAM_SECRET_KEYS_FILE, HOOKSTREAM_SECRET_KEY_ACTIVE): %w", err)
	}
	return ring, nil
}

func (s settings) egressConfig() (egress.Config, error) {
	cfg := egress.DefaultConfig()
	cfg.AllowHTTP = s.AllowHTTP
	cfg.AllowedPorts = s.EgressAllowPorts
	if s.RequestTimeout > 0 {
		cfg.RequestTimeout = s.RequestTimeout
	}
	for _, c := range s.EgressAllowCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return cfg, fmt.Errorf("HOOKSTREAM_EGRESS_ALLOW_CIDRS: %q is not a CIDR like 10.1.0.0/16", c)
		}
		cfg.AllowCIDRs = append(cfg.AllowCIDRs, p.Masked())
	}
	if err := errors.Join(s.egressProxyErr, s.egressProxiesErr); err != nil {
		return cfg, err
	}
	cfg.Proxy, cfg.Proxies = s.EgressProxy, s.EgressProxies
	return cfg, cfg.Validate()
}

func (s settings) retryConfig(log *slog.Logger, reg prometheus.Registerer) retrytopics.Config {
	cfg := retrytopics.DefaultConfig()
	cfg.Base = s.base(log, reg)
	cfg.Schedule.Delays = s.RetrySchedule
	cfg.Bounds = s.RetryBounds
	cfg.InstanceID = s.InstanceID
	cfg.TracerProvider = s.tracer
	return cfg
}

// runSenderWith is a componentRun that takes no pool.
func runSenderWith(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, _ *pgxpool.Pool) error {
	key, eg, err := s.secretsAndEgress()
	if err != nil {
		return err
	}
	view, err := endpoints.NewView(endpoints.ViewConfig{Brokers: s.KafkaBrokers, KafkaOptions: s.kafkaOpts,
		Topic: topics.For(s.TopicPrefix).Endpoints, Logger: log, Registerer: reg, Name: "sender"})
	if err != nil {
		return err
	}
	sched, err := retrytopics.NewScheduler(s.retryConfig(log, reg))
	if err != nil {
		return err
	}
	defer sched.Close()
	cfg := sender.DefaultConfig()
	cfg.Base = s.base(log, reg)
	cfg.InstanceID = s.InstanceID
	cfg.Egress, cfg.SecretKeys = eg, key
	cfg.UserAgent = thisBuild().userAgent()
	cfg.RetryClientErrors = s.RetryClientErrors
	cfg.PartnerMaxInFlight = s.Limits.DeliveriesInFlight
	cfg.PartnerRatePerSec = float64(s.Limits.DeliveriesPerSec)
	cfg.TracerProvider = s.tracer
	snd, err := sender.New(cfg, view, sched)
	if err != nil {
		return err
	}
	lag, err := lagMonitor(s, log, reg, kafkalag.Consumption{Group: snd.Group(), Topic: topics.For(s.TopicPrefix).Deliveries})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return view.Run(gctx) })
	g.Go(func() error { return snd.Run(gctx) })
	g.Go(func() error { return lag(gctx) })
	return g.Wait()
}

// runRetry is `hookstream retry`: the retry tier consumers and the failure window.
func runRetry(ctx context.Context, args []string, out io.Writer) error {
	return runComponent(ctx, "retry", args, out, true, runRetryWith)
}

func runRetryWith(ctx context.Context, s settings, log *slog.Logger, reg prometheus.Registerer, pool *pgxpool.Pool) error {
	tiers, err := retrytopics.NewTiers(s.retryConfig(log, reg))
	if err != nil {
		return err
	}
	wcfg := retrytopics.DefaultFailureWindowConfig()
	wcfg.WarnAfter, wcfg.DisableAfter, wcfg.Logger, wcfg.Registerer = s.FailingWarnAfter, s.FailingDisable, log, reg
	// Check often enough for the window's own scale: every minute, or a quarter of the warning
	// delay when that is shorter (compressed windows in tests and demos).
	wcfg.Interval = min(time.Minute, max(s.FailingWarnAfter/4, 100*time.Millisecond))
	window, err := retrytopics.NewFailureWindow(wcfg, pool)
	if err != nil {
		return err
	}
	var held []kafkalag.Consumption
	for _, t := range tiers.All() {
		held = append(held, kafkalag.Consumption{Group: t.Group(), Topic: t.Topic()})
	}
	// A tier's lag is mostly records waiting for their time, by design; it is exported for the
	// dashboard, and the alerts on growth leave the tiers out.
	lag, err := lagMonitor(s, log, reg, held...)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return tiers.Run(gctx) })
	g.Go(func() error { return lag(gctx) })
	g.Go(func() error { return window.Run(gctx) })
	return g.Wait()
}

// devSecret returns the value of a development secret kept in a file under the data directory,
// creating it with make on first use, so restarts of `hookstream dev` keep their endpoints'
// secrets readable and their operator token.
func devSecret(dir, name string, make func() (string, error)) (string, error) {
	path := filepath.Join(dir, name)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	v, err := make()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
		return "", err
	}
	return v, nil
}
