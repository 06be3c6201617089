package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/component"
	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/metrics"
	"github.com/hookstream/hookstream/internal/records"
)

// View is an in-memory copy of the endpoints topic, read from the beginning and followed live.
// Fanout and the sender each keep one; the retry tiers keep none: the sender's scheduler works
// out each retry's due time from the endpoint's retry policy in its own view, and a tier only
// holds the record until then. Records are committed by cdc in commit-LSN order, so
// the view always shows the endpoint tables as of some commit.
//
// A record the view cannot read (not JSON, another format version, an id other than its key)
// changes nothing: the endpoint keeps its last good state, so its events are still delivered as
// PostgreSQL and the admin API say; the record is counted in
// hookstream_endpoint_view_bad_records_total and logged by endpoint id and offset, never by
// content (it may hold sealed secrets). It is not dead-lettered: every view reads the topic from
// the start at every start, so each process would send the same dead letter again at each
// restart; the record stays in the endpoints topic, where the metric's alert points.
type View struct {
	cl    *kgo.Client
	adm   *kadm.Client
	topic string
	log   *slog.Logger
	bad   prometheus.Counter

	mu        sync.RWMutex
	byID      map[string]*records.Endpoint
	byPartner map[string][]*records.Endpoint
	filters   map[string]*filter.Filter // parsed payload filters of the endpoints that have one
	pos       int64                     // offset after the last record (data or control marker) applied
	advanced  chan struct{}             // closed and replaced whenever pos moves
}

// ViewConfig configures a View.
type ViewConfig struct {
	Brokers []string
	Topic   string // <prefix>.endpoints
	Logger  *slog.Logger
	// Registerer, when set, gets the view's metrics, labelled view=Name.
	Registerer prometheus.Registerer
	// Name says whose view it is ("fanout", "sender"), in its metrics and logs.
	Name string
	// KafkaOptions are extra franz-go options (e.g. for tests).
	KafkaOptions []kgo.Opt
}

// NewView connects to Kafka; Run fills and follows the view.
func NewView(cfg ViewConfig) (*View, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("endpoints: view needs brokers and a topic")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	set := &metrics.Set{Registerer: cfg.Registerer, Subsystem: "endpoint_view", ConstLabels: prometheus.Labels{"view": cfg.Name}}
	bad := set.Counter("bad_records_total",
		"Endpoints-topic records the endpoint view could not read; each endpoint kept its last good state.")
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("endpoints: view metrics: %w", err)
	}
	log := cfg.Logger.With("view", cfg.Name)
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.WithLogger(component.KafkaLogger(log)),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control markers move the position too; without them the view could not tell that it
		// has reached the last stable offset when the log ends with a commit marker.
		kgo.KeepControlRecords(),
	}, cfg.KafkaOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("endpoints: view: %w", err)
	}
	return &View{
		cl: cl, adm: kadm.NewClient(cl), topic: cfg.Topic, log: log, bad: bad,
		byID: map[string]*records.Endpoint{}, byPartner: map[string][]*records.Endpoint{},
		filters: map[string]*filter.Filter{}, advanced: make(chan struct{}),
	}, nil
}

// Run applies records until ctx ends, then closes the client.
func (v *View) Run(ctx context.Context) error {
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
func (v *View) apply(r *kgo.Record) {
	v.pos = r.Offset + 1
	if r.Attrs.IsControl() {
		return
	}
	id := string(r.Key)
	var (
		e   *records.Endpoint
		flt *filter.Filter
	)
	if r.Value != nil { // nil is a tombstone: the endpoint was deleted
		var err error
		if e, flt, err = readEndpoint(id, r.Value); err != nil {
			v.bad.Inc()
			_, kept := v.byID[id]
			v.log.Error("endpoint record not understood; the view keeps the endpoint's last good state",
				"endpoint_id", id, "partition", r.Partition, "offset", r.Offset, "kept", kept, "err", err)
			return
		}
	}
	if old, ok := v.byID[id]; ok {
		v.byPartner[old.PartnerID] = slices.DeleteFunc(v.byPartner[old.PartnerID], func(e *records.Endpoint) bool { return e.ID == id })
		if len(v.byPartner[old.PartnerID]) == 0 {
			delete(v.byPartner, old.PartnerID)
		}
		delete(v.byID, id)
		delete(v.filters, id)
	}
	if e != nil {
		v.byID[id] = e
		if flt != nil {
			v.filters[id] = flt
		}
		v.byPartner[e.PartnerID] = append(v.byPartner[e.PartnerID], e)
	}
}

// readEndpoint decodes the endpoints record keyed id, with its payload filter parsed (nil when
// it has none). Its errors never quote the value.
func readEndpoint(id string, value []byte) (*records.Endpoint, *filter.Filter, error) {
	var e records.Endpoint
	if err := json.Unmarshal(value, &e); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, nil, fmt.Errorf("not JSON (at byte %d)", syntax.Offset)
		}
		var field *json.UnmarshalTypeError
		if errors.As(err, &field) {
			return nil, nil, fmt.Errorf("field %s is not a %s", field.Field, field.Type)
		}
		return nil, nil, errors.New("not an endpoint record")
	}
	switch {
	case e.V != records.EndpointVersion:
		return nil, nil, fmt.Errorf("endpoint record version %d, this view reads %d", e.V, records.EndpointVersion)
	case e.ID != id:
		return nil, nil, errors.New("the record's id is not its key")
	case e.PartnerID == "":
		return nil, nil, errors.New("the record names no partner")
	}
	if e.Filter == "" {
		return &e, nil, nil
	}
	// The admin API parsed it at registration, under that release's cost limits (ParseStored
	// reads it whatever they were); one this view cannot parse comes from a newer grammar, and
	// delivering past it would break the filter's promise.
	flt, err := filter.ParseStored(e.Filter)
	if err != nil {
		return nil, nil, fmt.Errorf("filter: %w", err)
	}
	return &e, flt, nil
}

// CatchUp waits until the view holds every endpoint record committed before the call: it reads
// the topic's last stable offset now and waits for the view to reach it. Fanout calls it after
// reading events, so an endpoint created before an event committed is in the view when the
// event is matched (R13). It returns at once when the topic is quiet.
func (v *View) CatchUp(ctx context.Context) error {
	offsets, err := v.adm.ListCommittedOffsets(ctx, v.topic)
	if err != nil {
		return fmt.Errorf("endpoints: last stable offset: %w", err)
	}
	o, ok := offsets.Lookup(v.topic, 0)
	if !ok || o.Err != nil {
		return fmt.Errorf("endpoints: last stable offset: %v", o.Err)
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

// WaitVersion waits until the view holds endpoint id at version or later (records.Endpoint.Version
// only grows), or ctx ends. The sender calls it for test and replay records, which carry the
// version the admin API answered with (read-your-writes).
func (v *View) WaitVersion(ctx context.Context, id string, version int64) error {
	for {
		v.mu.RLock()
		e, advanced := v.byID[id], v.advanced
		v.mu.RUnlock()
		if e != nil && e.Version >= version {
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
func (v *View) Get(id string) (*records.Endpoint, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	e, ok := v.byID[id]
	return e, ok
}

// Filter returns the parsed payload filter of endpoint id, nil when it has none.
func (v *View) Filter(id string) *filter.Filter {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.filters[id]
}

// ForPartner returns the partner's endpoints (shared values: do not modify).
func (v *View) ForPartner(partnerID string) []*records.Endpoint {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return slices.Clone(v.byPartner[partnerID])
}

// Len is the number of endpoints in the view.
func (v *View) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.byID)
}

// Position is the offset after the last endpoints record the view has applied.
func (v *View) Position() int64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.pos
}
