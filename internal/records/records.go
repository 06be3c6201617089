// Package records defines the JSON values hookstream's components exchange through Kafka
// (design.md section 5). Each value carries "v", its own format version; a reader refuses a
// version it does not know rather than guessing.
package records

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/hookstream/hookstream/internal/retrypolicy"
)

// LSN is a PostgreSQL WAL position, written in JSON as PostgreSQL prints it ("16/B374D848").
type LSN uint64

func (l LSN) String() string { return pglogrepl.LSN(l).String() }

// MarshalJSON writes the LSN as a string.
func (l LSN) MarshalJSON() ([]byte, error) { return json.Marshal(l.String()) }

// UnmarshalJSON reads an LSN written by MarshalJSON.
func (l *LSN) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("lsn: %w", err)
	}
	v, err := pglogrepl.ParseLSN(s)
	if err != nil {
		return fmt.Errorf("lsn %q: %w", s, err)
	}
	*l = LSN(v)
	return nil
}

// ParseLSN reads "16/B374D848".
func ParseLSN(s string) (LSN, error) {
	v, err := pglogrepl.ParseLSN(s)
	return LSN(v), err
}

// Headers of event records on the events topic.
const (
	HeaderPartnerID     = "partner_id"
	HeaderType          = "type"
	HeaderSchemaVersion = "schema_version"
	HeaderCommitLSN     = "commit_lsn"
	HeaderCommitTime    = "commit_time"
)

// HeaderFannedOut is on an events record whose deliveries cdc made itself, in the Kafka
// transaction that holds the event (value FannedOutByCDC): fanout passes it by. An events
// record without it is fanned out by fanout (design.md section 5).
const (
	HeaderFannedOut = "fanned_out"
	FannedOutByCDC  = "cdc"
)

// HeaderReleasedAt is on a deliveries record a retry tier released (a retry or a deferral that
// came back): the time (RFC 3339, nanoseconds, UTC) at which the tier checked it was due.
const HeaderReleasedAt = "released_at"

// HeaderTraceparent is the W3C trace context (https://www.w3.org/TR/trace-context/) of the hop
// that wrote a record, on events, deliveries, retry-tier and attempts records, so one event's
// trace runs from the platform's transaction to the partner's request (internal/tracing). Only
// a process with tracing on reads or writes it.
const HeaderTraceparent = "traceparent"

// EventPartition is the events-topic partition of a partner: every event of one partner lands in
// the same partition, in commit order (R32). FNV-1a keeps it simple to compute in any language.
// Readers outside hookstream get it as outbox.PartitionFor, a contract that never changes.
func EventPartition(partnerID string, partitions int32) int32 {
	h := fnv.New32a()
	h.Write([]byte(partnerID))
	return int32(h.Sum32() % uint32(partitions))
}

// Endpoint is the value of an endpoints-topic record: the full current configuration of one
// endpoint as of the commit at LSN. A nil value (tombstone) means the endpoint was deleted.
type Endpoint struct {
	V               int      `json:"v"`
	ID              string   `json:"id"`
	PartnerID       string   `json:"partner_id"`
	URL             string   `json:"url"`
	Description     string   `json:"description"`
	Status          string   `json:"status"`
	EventTypes      []string `json:"event_types"`
	SchemaVersion   int      `json:"schema_version"`
	MaxInFlight     int      `json:"max_in_flight"`
	RateLimitPerSec *float64 `json:"rate_limit_per_sec"`
	Ordered         bool     `json:"ordered"`
	// StrictOrder (with Ordered) holds a failing head until it is delivered or its retry
	// schedule is exhausted, with no time limit (design.md section 7).
	StrictOrder    bool       `json:"strict_order,omitempty"`
	FailingSince   *time.Time `json:"failing_since"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	Version        int64      `json:"version"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// CreatedLSN is the commit LSN of the endpoint's creation: events committed at or after it
	// reach the endpoint, earlier ones never do (R13).
	CreatedLSN LSN `json:"created_lsn"`
	// LSN is the commit LSN of the change this record describes.
	LSN     LSN      `json:"lsn"`
	Secrets []Secret `json:"secrets"`
	// Filter is the endpoint's payload filter (internal/filter); empty: none.
	Filter string `json:"filter,omitempty"`
	// RetryPolicy is the endpoint's retry policy; nil: the deployment's.
	RetryPolicy *retrypolicy.Policy `json:"retry_policy,omitempty"`
	// RequestOptions are the endpoint's headers, authentication, client certificate and
	// egress proxy; absent in records written before they existed, which means none.
	RequestOptions RequestOptions `json:"request_options"`
}

// Secret is one signing secret, encrypted with AES-256-GCM under the processes' key (R16).
type Secret struct {
	ID         string     `json:"id"`
	Ciphertext []byte     `json:"ciphertext"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
}

// EndpointVersion is the format version of Endpoint.
const EndpointVersion = 1

// Checkpoint is cdc's progress: the newest commit LSN whose changes are in Kafka. It is written
// in the same Kafka transaction as those changes (R10).
type Checkpoint struct {
	V         int    `json:"v"`
	Slot      string `json:"slot"`
	CommitLSN LSN    `json:"commit_lsn"`
	EndLSN    LSN    `json:"end_lsn"`
	// EndpointsOffset is the offset after the last endpoints-topic record cdc had committed: the
	// endpoint table as of this checkpoint is the endpoints topic read up to it.
	EndpointsOffset int64 `json:"endpoints_offset"`
	// EventsPartitions is the partition count of the events topic cdc published the
	// transaction's events with (records.EventPartition). It is the topic's count except after
	// partitions were added and before cdc's next session: readers of one partner's partition
	// follow it, not the topic's metadata (design.md section 5). 0 in checkpoints of older cdc.
	EventsPartitions int32 `json:"events_partitions,omitempty"`
	// EventsPartitionsBefore is the count cdc published with before the last change of
	// EventsPartitions (0: none known), so a reader holding a position under that count can
	// follow a partner from its old partition to its new one, and one under an older count
	// knows it cannot.
	EventsPartitionsBefore int32     `json:"events_partitions_before,omitempty"`
	At                     time.Time `json:"at"`
}

// CheckpointVersion is the format version of Checkpoint.
const CheckpointVersion = 1

// DeadLetter is the value of a dlq record: something that could not be processed, with the
// reason, so nothing is dropped silently (design.md section 6).
type DeadLetter struct {
	V        int             `json:"v"`
	Source   string          `json:"source"` // the component that gave up: "cdc", "sender", "retry"
	Reason   string          `json:"reason"`
	EventID  string          `json:"event_id,omitempty"`
	Partner  string          `json:"partner_id,omitempty"`
	LSN      LSN             `json:"lsn,omitempty"`
	At       time.Time       `json:"at"`
	Original json.RawMessage `json:"original,omitempty"` // the offending input, possibly truncated
}

// DeadLetterVersion is the format version of DeadLetter.
const DeadLetterVersion = 1

// Delivery triggers (design.md section 5).
const (
	TriggerInitial = "initial"
	TriggerRetry   = "retry"
	TriggerReplay  = "replay"
	TriggerTest    = "test"
)

// Triggers lists every delivery trigger: the label values of the metrics by trigger, exported
// from the start (a series that appears at its first count hides that count from increase()).
var Triggers = []string{TriggerInitial, TriggerRetry, TriggerReplay, TriggerTest}

// Delivery is the value of deliveries and retry.<tier> records (key: endpoint_id): one attempt
// to make of one event at one endpoint.
type Delivery struct {
	V          int    `json:"v"`
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
	PartnerID  string `json:"partner_id"`
	EventType  string `json:"event_type"`
	// AttemptNo is the number of the attempt this record asks for: 1 for the first.
	AttemptNo int    `json:"attempt_no"`
	Trigger   string `json:"trigger"`
	// Body is the exact envelope bytes of the event record (R15): signed and sent as they are.
	Body []byte `json:"body"`
	// EventLSN is the commit LSN of the event.
	EventLSN LSN `json:"event_lsn"`
	// CreatedAt is when the delivery was first made (fanout time), for the retry window.
	CreatedAt time.Time `json:"created_at"`
	// CommitTime is when the event's PostgreSQL transaction committed (the events record's
	// commit_time header), carried unchanged through retries and replays: the start of the
	// sender's hookstream_delivery_latency_seconds. Zero on test records (no event was
	// committed) and on records written before the field existed.
	CommitTime time.Time `json:"commit_time,omitzero"`
	// DueAt is the earliest time the attempt may be made; zero means now.
	DueAt time.Time `json:"due_at"`
	// Deferrals counts the record's hand-offs to a retry tier from a full queue (no attempt
	// made), on which the sender's next deferral delay backs off; deferrals while the
	// endpoint's circuit is open are not counted.
	Deferrals int `json:"deferrals,omitempty"`
	// Traceparent is the record's HeaderTraceparent, kept beside the value (never in it) while
	// a process handles the delivery; empty when tracing is off.
	Traceparent string `json:"-"`
	// EndpointVersion, on test and replay records the admin API makes, is the endpoint's
	// version (records.Endpoint.Version) when the API answered: the sender does not send the
	// record with an older configuration of the endpoint (read-your-writes). Zero
	// (fanout's and older records) asks for no version.
	EndpointVersion int64 `json:"endpoint_version,omitempty"`
}

// DeliveryVersion is the format version of Delivery.
const DeliveryVersion = 1

// DeliveryID derives the delivery id of (event, endpoint): the same pair always gets the same id,
// so fanning out an event twice can never create a second delivery (R11).
func DeliveryID(eventID, endpointID string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + endpointID))
	return "dlv_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// Error categories of attempts (design.md section 7, R19). Every category but internal names a
// cause outside the sender: the network, the receiver, the endpoint's configuration or the
// records. internal is hookstream's own fault (a wrong secret key, a bug) and is never a
// receiver's.
const (
	CategoryDNS                = "dns"
	CategoryConnectionRefused  = "connection_refused"
	CategoryConnectionReset    = "connection_reset" // the receiver reset or closed the connection before answering
	CategoryTLS                = "tls"
	CategoryTimeout            = "timeout"
	CategoryHTTPStatus         = "http_status"
	CategoryInvalidResponse    = "invalid_response" // an answer that is not HTTP, or headers past the limit
	CategoryRedirect           = "redirect"
	CategoryBlockedDestination = "blocked_destination"
	CategoryEndpointDisabled   = "endpoint_disabled" // not sent: the endpoint was disabled by then
	CategoryTenantMismatch     = "tenant_mismatch"
	CategoryInternal           = "internal"
)

// ErrorCategories lists every error category above.
var ErrorCategories = []string{CategoryDNS, CategoryConnectionRefused, CategoryConnectionReset, CategoryTLS, CategoryTimeout,
	CategoryHTTPStatus, CategoryInvalidResponse, CategoryRedirect, CategoryBlockedDestination, CategoryEndpointDisabled,
	CategoryTenantMismatch, CategoryInternal}

// SaysNothingOfReceiver reports whether a failed attempt of category c was never sent, for a
// reason of hookstream's or of the endpoint's state (internal, endpoint_disabled): such an attempt
// neither starts an endpoint's failure window nor counts in its health (R23).
func SaysNothingOfReceiver(c string) bool {
	return c == CategoryInternal || c == CategoryEndpointDisabled
}

// Attempt outcomes.
const (
	OutcomeDelivered = "delivered" // 2xx: the delivery succeeded
	OutcomeRetrying  = "retrying"  // failed; another attempt is scheduled at NextAttemptAt
	OutcomeFailed    = "failed"    // failed and final: exhausted, 410, or not retryable
)

// Attempt is the value of an attempts record (key: delivery_id): the evidence of one attempt
// (design.md section 7, R18), which the recorder stores in PostgreSQL.
type Attempt struct {
	V          int       `json:"v"`
	DeliveryID string    `json:"delivery_id"`
	EventID    string    `json:"event_id"`
	EndpointID string    `json:"endpoint_id"`
	PartnerID  string    `json:"partner_id"`
	EventType  string    `json:"event_type"`
	AttemptNo  int       `json:"attempt_no"`
	Trigger    string    `json:"trigger"`
	StartedAt  time.Time `json:"started_at"`
	// Status is the HTTP status, or 0 when no response arrived.
	Status int `json:"status,omitempty"`
	// LatencyMS is the attempt's latency in whole milliseconds (LatencyUS/1000), written for
	// the readers of the attempts topic that know only it.
	LatencyMS int64 `json:"latency_ms"`
	// LatencyUS is the same latency in microseconds: a receiver on the same host answers in
	// well under a millisecond. A record written before the field existed has none and is read
	// with LatencyMS*1000 (Attempt.UnmarshalJSON).
	LatencyUS     int64  `json:"latency_us"`
	Outcome       string `json:"outcome"`
	ErrorCategory string `json:"error_category,omitempty"`
	// ResponseExcerpt is at most 1 KiB of the response, secrets and auth headers redacted.
	ResponseExcerpt string     `json:"response_excerpt,omitempty"`
	NextAttemptAt   *time.Time `json:"next_attempt_at,omitempty"`
	// Traceparent is the trace context of the attempt's span, written to the record's
	// HeaderTraceparent, never to its value; empty when tracing is off.
	Traceparent string `json:"-"`
	// Circuit is the endpoint's circuit breaker right after this attempt, as the sender's lane
	// holds it (CircuitClosed, CircuitOpen, CircuitHalfOpen); empty when the sender does not say
	// (ordered endpoints, refusals). The recorder keeps the newest in endpoint_health, so the
	// admin API can show a state that lives only in the sender.
	Circuit string `json:"circuit,omitempty"`
	// CircuitProbeAt, with Circuit open, is when the circuit lets its next probe through.
	CircuitProbeAt *time.Time `json:"circuit_probe_at,omitempty"`
	// CircuitAt is when the sender read Circuit, right after recording this attempt's result:
	// concurrent attempts end in any order, and the newest statement is the one that holds.
	CircuitAt *time.Time `json:"circuit_at,omitempty"`
	// Order is the ordered endpoint's hold right after this attempt, as the sender's lane holds
	// it; nil for endpoints that are not ordered. The recorder keeps the newest in
	// endpoint_health, like the circuit.
	Order *OrderHold `json:"order,omitempty"`
	// OrderBroken marks the final failure of a strict ordered endpoint's head: the records held
	// behind it go on without it, so the endpoint's order gives way here (design.md section 7).
	OrderBroken bool `json:"order_broken,omitempty"`
}

// OrderHold is an ordered endpoint's hold as the sender states it after an attempt.
type OrderHold struct {
	// Held is how many of the endpoint's records wait behind the head in the sender.
	Held int `json:"held"`
	// HeadSince is when the head began to be held (its first failed attempt in the hold); nil
	// when no head is held (the attempt delivered or finished the head).
	HeadSince *time.Time `json:"head_since,omitempty"`
	// At is when the sender read the hold: the newest statement is the one that holds.
	At time.Time `json:"at"`
}

// Circuit states of Attempt.Circuit.
const (
	CircuitClosed   = "closed"
	CircuitOpen     = "open"
	CircuitHalfOpen = "half_open"
)

// AttemptVersion is the format version of Attempt.
const AttemptVersion = 1

// UnmarshalJSON reads an attempts record field by field as encoding/json does, and then gives
// one written before latency_us existed (no such key, or null) LatencyUS = LatencyMS*1000, so
// that every reader has the latency in microseconds (design.md section 5). UnmarshalAttempt's
// fast path does the same.
func (a *Attempt) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil // as encoding/json does with null for a struct
	}
	// attempt has Attempt's fields without this method. It is named Attempt so that
	// encoding/json's errors name the type as they always have ("Go struct field
	// Attempt.status of type int").
	type attempt Attempt
	type Attempt attempt
	if err := json.Unmarshal(data, (*Attempt)(a)); err != nil {
		return err
	}
	var latency struct {
		US *int64 `json:"latency_us"`
	}
	if err := json.Unmarshal(data, &latency); err != nil {
		return err // not reached: the same value decoded above
	}
	if latency.US == nil {
		a.LatencyUS = microsOfMillis(a.LatencyMS)
	}
	return nil
}

// microsOfMillis is ms milliseconds in microseconds, held to int64's range: a record may
// carry any latency_ms, and one near the limits must not wrap around to the other sign.
func microsOfMillis(ms int64) int64 {
	switch {
	case ms > math.MaxInt64/1000:
		return math.MaxInt64
	case ms < math.MinInt64/1000:
		return math.MinInt64
	}
	return ms * 1000
}
