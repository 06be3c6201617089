package endpoints

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookstream/hookstream/internal/filter"
	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/tracing"
)

// Matcher is what an event is fanned out against: a partner's endpoints and their parsed
// payload filters. *View is one (fanout's, from the endpoints topic); cdc keeps its own, the
// endpoint tables as of the change it is streaming (design.md section 5).
type Matcher interface {
	// ForPartner returns the partner's endpoints (shared values: never modified).
	ForPartner(partnerID string) []*records.Endpoint
	// Filter returns the parsed payload filter of endpoint id, nil when it has none.
	Filter(id string) *filter.Filter
}

// Event is what fanning out needs of an events record.
type Event struct {
	ID, PartnerID, Type string
	SchemaVersion       int
	LSN                 records.LSN // the commit LSN of its PostgreSQL transaction
	CommitTime          time.Time   // zero when unknown
	Envelope            []byte      // the envelope, exact bytes, in the event's own schema version
	Traceparent         string      // the events record's span, the parent of each delivery's; "" for none
}

// FanOut is what fanning one event out made: the records to produce in the same Kafka
// transaction, and counts for the writer's metrics.
type FanOut struct {
	Records    []*kgo.Record // delivery records and dead letters, in endpoint order
	Deliveries int           // the delivery records among them
	Filtered   int           // endpoints that receive the type but whose payload filter refused the event
}

// Fanning is how a writer of deliveries fans events out.
type Fanning struct {
	Deliveries, DLQ string // the topics
	Component       string // the writer, the source of its dead letters
	// Convert returns the envelope in the schema version to (eventcatalog.ConvertEnvelope).
	Convert func(envelope []byte, eventType string, from, to int) ([]byte, error)
	Tracer  *tracing.Tracer // nil: tracing off; else a span per delivery
}

// Fan makes one delivery record per endpoint of m that receives ev (R11, R13, R14): of the
// event's partner, active, subscribed to its type, created no later than the event committed,
// and past its payload filter; the body is the envelope in the endpoint's schema version. An
// endpoint whose version the event cannot be converted to gets a dead letter naming both
// instead.
func (f Fanning) Fan(m Matcher, ev Event, now time.Time) FanOut {
	var (
		out  FanOut
		docs filterDocs
	)
	for _, e := range m.ForPartner(ev.PartnerID) {
		if !Receives(e, ev.PartnerID, ev.Type) || e.CreatedLSN > ev.LSN {
			continue
		}
		body, err := f.Convert(ev.Envelope, ev.Type, ev.SchemaVersion, e.SchemaVersion)
		if err != nil {
			dl := records.NewDeadLetter(f.Component, fmt.Sprintf("endpoint %s: %v", e.ID, err), records.ClipOriginal(ev.Envelope))
			dl.EventID, dl.Partner = ev.ID, ev.PartnerID
			out.Records = append(out.Records, records.DeadLetterRecord(f.DLQ, e.ID, dl))
			continue
		}
		if flt := m.Filter(e.ID); flt != nil && !docs.match(flt, e.SchemaVersion, body) {
			out.Filtered++
			continue
		}
		d := records.NewDelivery(ev.ID, e.ID, ev.PartnerID, ev.Type, records.TriggerInitial, body, now)
		d.EventLSN, d.CommitTime = ev.LSN, ev.CommitTime
		rec := &kgo.Record{Topic: f.Deliveries, Key: []byte(e.ID), Value: d.AppendJSON(nil)}
		if f.Tracer != nil {
			span := f.Tracer.Start(ev.Traceparent, tracing.SpanFanoutDelivery, trace.SpanKindProducer, tracing.DeliveryHop(d))
			tracing.SetHeader(rec, span.Traceparent())
			span.End()
		}
		out.Records = append(out.Records, rec)
		out.Deliveries++
	}
	return out
}

// filterDocs decodes an event's envelope for payload filters at most once per schema version,
// and only when an endpoint with a filter receives it; decoding reads its numbers, so every
// endpoint's filter compares them without parsing again.
type filterDocs map[int]*filter.Document

// match evaluates flt against body, the envelope of version schemaVersion the endpoint would
// receive. A body that is no JSON object matches no filter: a filter is a promise of what the
// endpoint receives.
func (d *filterDocs) match(flt *filter.Filter, schemaVersion int, body []byte) bool {
	if *d == nil {
		*d = filterDocs{}
	}
	doc, ok := (*d)[schemaVersion]
	if !ok {
		if decoded, err := filter.Decode(body); err == nil {
			doc = &decoded
		}
		(*d)[schemaVersion] = doc
	}
	return doc != nil && flt.Match(*doc)
}
