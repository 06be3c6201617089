package retrytopics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
	"github.com/hookstream/hookstream/internal/topics"
	"github.com/hookstream/hookstream/internal/tracing"
)

// Headers of retry-tier records.
const (
	// HeaderDueAt carries the record's due time (RFC 3339, nanoseconds, UTC) so a tier consumer
	// can hold a record without decoding its value. It equals the value's due_at.
	HeaderDueAt = "due_at"
	// HeaderReleasedAt is added when a tier consumer releases the record to the deliveries
	// topic (records.HeaderReleasedAt).
	HeaderReleasedAt = records.HeaderReleasedAt
)

// Scheduler hands deliveries the sender cannot finish now to the retry tiers, and exhausted ones
// to the dead-letter topic. It implements sender.Retrier and is safe for concurrent use.
//
// Writes are durable before a call returns: acks from all in-sync replicas, idempotent producer.
type Scheduler struct {
	cfg    Config
	names  topics.Names
	routes []tierRoute
	cl     *kgo.Client
	m      *retryMetrics
	log    *slog.Logger
	now    func() time.Time
}

// NewScheduler returns a Scheduler writing to cfg's topics. Close it when done.
func NewScheduler(cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("component", "retry-scheduler")
	cl, err := kgo.NewClient(cfg.ClientOptions(log,
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(2*time.Millisecond),
	)...)
	if err != nil {
		return nil, fmt.Errorf("retrytopics: kafka producer: %w", err)
	}
	return &Scheduler{
		cfg:    cfg,
		names:  topics.For(cfg.Prefix),
		routes: cfg.routes(),
		cl:     cl,
		m:      newMetrics(cfg.Registerer).forScheduler(cfg.routes()),
		log:    log,
		now:    time.Now,
	}, nil
}

// Close waits for writes in flight and closes the Kafka client.
func (s *Scheduler) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.cl.Flush(ctx)
	s.cl.Close()
}

// Schedule is called after attempt a of delivery d failed in a way that may be retried (R20,
// R22). When the schedule allows another attempt it writes d, as attempt d.AttemptNo+1 with
// trigger retry and its due time, to the retry tier matching the wait and returns the due time.
// Otherwise it writes a dead letter holding d and a to the dlq topic and returns final = true.
// retryAfter is the receiver's valid Retry-After, zero when none: it raises the wait, up to
// Schedule.MaxRetryAfter, counted from now. policy is the endpoint's retry policy: its delays
// and attempt count for d's event type replace the configured schedule's, brought within
// Config.Bounds (retrypolicy.Delays); nil keeps the configured schedule. An error means nothing
// may be assumed written; the caller must not commit its input.
func (s *Scheduler) Schedule(ctx context.Context, d records.Delivery, a records.Attempt, retryAfter time.Duration, policy *retrypolicy.Policy) (next time.Time, final bool, err error) {
	if d.EndpointID == "" {
		return time.Time{}, false, errors.New("retrytopics: schedule: delivery has no endpoint id")
	}
	now := s.now()
	attemptNo := max(d.AttemptNo, 1)
	delay, ok := s.scheduleFor(d, policy).Next(attemptNo, retryAfter)
	if !ok {
		if err := s.deadLetter(ctx, d, a, attemptNo, now); err != nil {
			return time.Time{}, false, err
		}
		return time.Time{}, true, nil
	}
	base := a.StartedAt
	if base.IsZero() || base.After(now) {
		base = now
	}
	due := base.Add(delay)
	if retryAfter > 0 {
		// Retry-After counts from the response, not from the start of the attempt.
		due = maxTime(due, now.Add(min(retryAfter, s.cfg.Schedule.MaxRetryAfter)))
	}
	d.AttemptNo = attemptNo + 1
	d.Trigger = records.TriggerRetry
	d.DueAt = due.UTC()
	if a.Traceparent != "" {
		d.Traceparent = a.Traceparent // the retry is the child of the attempt that failed
	}
	route, err := s.write(ctx, d, now)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("retrytopics: schedule %s attempt %d: %w", d.DeliveryID, d.AttemptNo, err)
	}
	s.m.scheduled.WithLabelValues(route.name).Inc()
	return d.DueAt, false, nil
}

// Next is what Schedule would decide for d after its failed attempt d.AttemptNo, writing
// nothing: the wait before the next attempt (jitter included, raised to retryAfter up to
// Schedule.MaxRetryAfter), or final = true when that attempt was the last the schedule in force
// allows. A strict ordered endpoint's sender holds its head in process by it (design.md
// section 7).
func (s *Scheduler) Next(d records.Delivery, retryAfter time.Duration, policy *retrypolicy.Policy) (wait time.Duration, final bool) {
	wait, ok := s.scheduleFor(d, policy).Next(max(d.AttemptNo, 1), retryAfter)
	return wait, !ok
}

// scheduleFor is the schedule in force for d at an endpoint with policy (nil: the configured
// one), brought within Config.Bounds.
func (s *Scheduler) scheduleFor(d records.Delivery, policy *retrypolicy.Policy) Schedule {
	schedule := s.cfg.Schedule
	if policy != nil {
		schedule.Delays = retrypolicy.Delays(policy, d.EventType, schedule.Delays, s.cfg.Bounds)
	}
	return schedule
}

// Defer hands over work that made no attempt (the endpoint's circuit is open or its queue is
// full): the same attempt number is asked for again after `after` (at most Config.MaxHold). The
// record keeps d.Deferrals as given: the caller counts the hand-offs its delay backs off on.
func (s *Scheduler) Defer(ctx context.Context, d records.Delivery, after time.Duration) error {
	if d.EndpointID == "" {
		return errors.New("retrytopics: defer: delivery has no endpoint id")
	}
	now := s.now()
	d.DueAt = now.Add(min(max(after, 0), s.cfg.MaxHold)).UTC()
	route, err := s.write(ctx, d, now)
	if err != nil {
		return fmt.Errorf("retrytopics: defer %s: %w", d.DeliveryID, err)
	}
	s.m.deferred.WithLabelValues(route.name).Inc()
	return nil
}

// write produces d to the tier matching its wait from now and waits for the acknowledgement.
func (s *Scheduler) write(ctx context.Context, d records.Delivery, now time.Time) (tierRoute, error) {
	if d.V == 0 {
		d.V = records.DeliveryVersion
	}
	route := routeFor(s.routes, d.DueAt.Sub(now))
	value := d.AppendJSON(nil)
	r := &kgo.Record{
		Topic:   route.topic,
		Key:     []byte(d.EndpointID),
		Value:   value,
		Headers: []kgo.RecordHeader{{Key: HeaderDueAt, Value: []byte(d.DueAt.Format(time.RFC3339Nano))}},
	}
	tracing.SetHeader(r, d.Traceparent)
	if err := s.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return route, fmt.Errorf("produce to %s: %w", route.topic, err)
	}
	return route, nil
}

// deadLetter writes the exhausted delivery with its final attempt to the dlq topic.
func (s *Scheduler) deadLetter(ctx context.Context, d records.Delivery, a records.Attempt, attempts int, now time.Time) error {
	reason := fmt.Sprintf("exhausted after %d attempts", attempts)
	original, err := json.Marshal(exhausted{Delivery: d, FinalAttempt: a})
	if err != nil {
		return fmt.Errorf("retrytopics: dead letter %s: %w", d.DeliveryID, err)
	}
	if len(original) > s.cfg.MaxDeadLetterBytes {
		reason += fmt.Sprintf("; body of %d bytes omitted (the event stays in the events topic)", len(d.Body))
		d.Body = nil
		if original, err = json.Marshal(exhausted{Delivery: d, FinalAttempt: a}); err != nil {
			return fmt.Errorf("retrytopics: dead letter %s: %w", d.DeliveryID, err)
		}
	}
	dl := records.NewDeadLetter("retry", reason, original)
	dl.EventID, dl.Partner, dl.At = d.EventID, d.PartnerID, now.UTC()
	r := records.DeadLetterRecord(s.names.DLQ, d.EndpointID, dl)
	if err := s.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("retrytopics: dead letter %s: produce to %s: %w", d.DeliveryID, s.names.DLQ, err)
	}
	s.m.deadLetters.WithLabelValues(reasonExhausted).Inc()
	s.log.Info("delivery exhausted", "delivery_id", d.DeliveryID, "event_id", d.EventID, "endpoint_id", d.EndpointID, "attempts", attempts)
	return nil
}

// exhausted is the Original of an exhausted delivery's dead letter: the delivery as last
// attempted and the evidence of that final attempt.
type exhausted struct {
	Delivery     records.Delivery `json:"delivery"`
	FinalAttempt records.Attempt  `json:"final_attempt"`
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
