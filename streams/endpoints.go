package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// EndpointView is an in-memory copy of the endpoints topic, read from the beginning and followed
// live. Fanout, the sender and the retry tiers each keep one. Records are committed by cdc in
// commit-LSN order, so the view always shows the endpoint tables as of some commit.
type EndpointView struct {
	cl    *kgo.Client
	adm   *kadm.Client
	topic string
	log   *slog.Logger

	mu        sync.RWMutex
	byID      map[string]*records.Endpoint
	byPartner map[string][]*records.Endpoint
	pos       int64         // offset after the last record (data or control marker) applied
	advanced  chan struct{} // closed and replaced whenever pos moves
	bad       int           // records that could not be decoded
}

// ViewConfig configures an EndpointView.
type ViewConfig struct {
	Brokers []string
	Topic   string // <prefix>.endpoints
	Logger  *slog.Logger
	// KafkaOptions are extra franz-go options (e.g. for tests).
	KafkaOptions []kgo.Opt
}

// NewEndpointView connects to Kafka; Run fills and follows the view.
func NewEndpointView(cfg ViewConfig) (*EndpointView, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("streams: endpoint view needs brokers and a topic")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control markers move the position too; without them the view could not tell that it
		// has reached the last stable offset when the log ends with a commit marker.
		kgo.KeepControlRecords(),
	}, cfg.KafkaOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("streams: endpoint view: %w", err)
	}
	return &EndpointView{
		cl: cl, adm: kadm.NewClient(cl), topic: cfg.Topic, log: cfg.Logger,
		byID: map[string]*records.Endpoint{}, byPartner: map[string][]*records.Endpoint{},
		advanced: make(chan struct{}),
	}, nil
}

// Run applies records until ctx ends, then closes the client.
func (v *EndpointView) Run(ctx context.Context) error {
	defer v.cl.Close()
	for {
		fs := v.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			v.log.Warn("endpoint view fetch", "err", ferr)
		}
		v.mu.Lock()
		fs.EachRecord(v.apply)
		close(v.advanced)
		v.advanced = make(chan struct{})
		v.mu.Unlock()
	}
}

// apply folds one record into the view; the caller holds mu.
func (v *EndpointView) apply(r *kgo.Record) {
	v.pos = r.Offset + 1
	if r.Attrs.IsControl() {
		return
	}
	id := string(r.Key)
	if old, ok := v.byID[id]; ok {
		v.byPartner[old.PartnerID] = slices.DeleteFunc(v.byPartner[old.PartnerID], func(e *records.Endpoint) bool { return e.ID == id })
		if len(v.byPartner[old.PartnerID]) == 0 {
			delete(v.byPartner, old.PartnerID)
		}
		delete(v.byID, id)
	}
	if r.Value == nil {
		return
	}
	var e records.Endpoint
	if err := json.Unmarshal(r.Value, &e); err != nil || e.V != records.EndpointVersion || e.ID != id {
		v.bad++
		v.log.Error("endpoint record not understood; endpoint left out of the view", "endpoint_id", id, "offset", r.Offset, "err", err, "v", e.V)
		return
	}
	v.byID[id] = &e
	v.byPartner[e.PartnerID] = append(v.byPartner[e.PartnerID], &e)
}

// CatchUp waits until the view holds every endpoint record committed before the call: it reads
// the topic's last stable offset now and waits for the view to reach it. Fanout calls it after
// reading events, so an endpoint created before an event committed is in the view when the
// event is matched (R13). It returns at once when the topic is quiet.
func (v *EndpointView) CatchUp(ctx context.Context) error {
	offsets, err := v.adm.ListCommittedOffsets(ctx, v.topic)
	if err != nil {
		return fmt.Errorf("streams: endpoints last stable offset: %w", err)
	}
	o, ok := offsets.Lookup(v.topic, 0)
	if !ok || o.Err != nil {
		return fmt.Errorf("streams: endpoints last stable offset: %v", o.Err)
	}
	for {
		v.mu.RLock()
		pos, advanced := v.pos, v.advanced
		v.mu.RUnlock()
		if pos >= o.Offset {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-advanced:
		}
	}
}

// Get returns the endpoint with id. The returned value is shared: do not modify it.
func (v *EndpointView) Get(id string) (*records.Endpoint, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	e, ok := v.byID[id]
	return e, ok
}

// ForPartner returns the partner's endpoints (shared values: do not modify).
func (v *EndpointView) ForPartner(partnerID string) []*records.Endpoint {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return slices.Clone(v.byPartner[partnerID])
}

// Len is the number of endpoints in the view.
func (v *EndpointView) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.byID)
}

// Position is the offset after the last endpoints record the view has applied.
func (v *EndpointView) Position() int64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.pos
}

// Subscribed reports whether a subscription list covers eventType: an exact type, a "prefix.*"
// wildcard covering every type under prefix, or "*" for all. An empty list covers nothing.
func Subscribed(eventTypes []string, eventType string) bool {
	for _, s := range eventTypes {
		switch {
		case s == "*", s == eventType:
			return true
		case strings.HasSuffix(s, ".*") && strings.HasPrefix(eventType, s[:len(s)-1]):
			return true
		}
	}
	return false
}

// Receives is the tenancy and subscription rule, checked again at every asynchronous boundary
// (R13): the endpoint belongs to the event's partner, is active, and is subscribed to the type.
// Fanout adds the creation rule (the endpoint existed when the event committed).
func Receives(e *records.Endpoint, partnerID, eventType string) bool {
	return e != nil && e.PartnerID == partnerID && e.Status == "active" && Subscribed(e.EventTypes, eventType)
}
