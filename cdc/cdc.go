package cdc

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
)

// CDC tails the outbox and the endpoint tables into Kafka. Run it in one or more processes per
// slot: one reads, the others wait and take over within seconds when it dies (R12).
type CDC struct {
	cfg     Config
	names   topics.Names
	log     *slog.Logger
	metrics *cdcMetrics
	tracer  *tracing.Tracer // nil: tracing off
	lockKey int64
}

// New validates cfg and returns a CDC ready to Run.
func New(cfg Config) (*CDC, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	h.Write([]byte("hookstream-cdc/" + cfg.Slot))
	return &CDC{
		cfg:     cfg,
		names:   topics.For(cfg.Prefix),
		log:     cfg.Logger.With("component", "cdc", "slot", cfg.Slot),
		metrics: m,
		tracer:  tracing.New(cfg.TracerProvider),
		lockKey: int64(h.Sum64()),
	}, nil
}

// Run streams until ctx ends. A failed session (a lost connection, a broker restart, a fenced
// producer) ends cleanly and a new one starts from the last committed checkpoint, so a failure
// inside the process recovers the same way as a crash of the process.
func (c *CDC) Run(ctx context.Context) error {
	for {
		err := c.session(ctx)
		c.metrics.active.Set(0)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errConfig) {
			return err
		}
		c.metrics.sessionFailures.Inc()
		c.log.Error("session ended; restarting from the last checkpoint", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.cfg.RetryInterval):
		}
	}
}
