package retrytopics

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Tiers runs the consumers of every configured tier together: the loop of `hookstream retry`.
type Tiers struct {
	tiers []*Tier
}

// NewTiers returns one Tier per entry of cfg.TierDelays, in increasing delay order, sharing
// metrics and an instance id.
func NewTiers(cfg Config) (*Tiers, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := newMetrics(cfg.Registerer)
	instance := cfg.instanceID()
	ts := &Tiers{}
	for _, r := range cfg.routes() {
		ts.tiers = append(ts.tiers, newTier(cfg, r, m.forTier(r), instance))
	}
	return ts, nil
}

// Run runs every tier until ctx ends; each finishes its release in flight and leaves its group
// (unless it is a static member, see Config.InstanceID) before Run returns. It returns nil when ctx ends, or the first tier's configuration error.
func (ts *Tiers) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, t := range ts.tiers {
		g.Go(func() error { return t.Run(gctx) })
	}
	return g.Wait()
}

// All returns the tier consumers in increasing delay order.
func (ts *Tiers) All() []*Tier { return ts.tiers }

// Stats returns what each tier holds, in increasing delay order.
func (ts *Tiers) Stats() []TierStats {
	out := make([]TierStats, len(ts.tiers))
	for i, t := range ts.tiers {
		out[i] = t.Stats()
	}
	return out
}
