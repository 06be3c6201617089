// Package records defines the JSON values hookstream's components exchange through Kafka
// (design.md section 5). Each value carries "v", its own format version; a reader refuses a
// version it does not know rather than guessing.
package records

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pglogrepl"
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

// EventPartition is the events-topic partition of a partner: every event of one partner lands in
// the same partition, in commit order (R32). FNV-1a keeps it simple to compute in any language.
func EventPartition(partnerID string, partitions int32) int32 {
	h := fnv.New32a()
	h.Write([]byte(partnerID))
	return int32(h.Sum32() % uint32(partitions))
}

// Endpoint is the value of an endpoints-topic record: the full current configuration of one
// endpoint as of the commit at LSN. A nil value (tombstone) means the endpoint was deleted.
type Endpoint struct {
	V               int        `json:"v"`
	ID              string     `json:"id"`
	PartnerID       string     `json:"partner_id"`
	URL             string     `json:"url"`
	Description     string     `json:"description"`
	Status          string     `json:"status"`
	EventTypes      []string   `json:"event_types"`
	SchemaVersion   int        `json:"schema_version"`
	MaxInFlight     int        `json:"max_in_flight"`
	RateLimitPerSec *float64   `json:"rate_limit_per_sec"`
	Ordered         bool       `json:"ordered"`
	FailingSince    *time.Time `json:"failing_since"`
	DisabledReason  string     `json:"disabled_reason,omitempty"`
	Version         int64      `json:"version"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	// CreatedLSN is the commit LSN of the endpoint's creation: events committed at or after it
	// reach the endpoint, earlier ones never do (R13).
	CreatedLSN LSN `json:"created_lsn"`
	// LSN is the commit LSN of the change this record describes.
	LSN     LSN      `json:"lsn"`
	Secrets []Secret `json:"secrets"`
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
	EndpointsOffset int64     `json:"endpoints_offset"`
	At              time.Time `json:"at"`
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
