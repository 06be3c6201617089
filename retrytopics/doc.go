// Package retrytopics schedules retries over days through tiered delay topics (R22, design.md
// section 8), dead-letters exhausted deliveries, and warns about and then disables endpoints
// that keep failing (R23, FailureWindow).
//
// Scheduler implements the sender's Retrier. After a failed attempt it applies the Schedule
// (5 s, 1 m, 10 m, 1 h, 3 h, 6 h, 12 h, 24 h, 24 h after the first attempt, ±20 % jitter,
// Retry-After honoured up to 24 h) and writes the delivery, as the next attempt with trigger
// retry and its exact due_at, to <prefix>.retry.<tier>: the tier with the largest delay not
// above the wait. After the last attempt it writes a dead letter with the delivery and the final
// attempt to <prefix>.dlq. Defer hands over work that made no attempt the same way, keeping the
// attempt number and counting the deferral. Writes are acknowledged by all in-sync replicas
// before a call returns.
//
// Tier (and Tiers, every tier together, for `hookstream retry`) consumes a tier topic and
// releases each record to <prefix>.deliveries when it is due. It guarantees:
//
//   - Never early: a record is released only once its due_at has passed on the releaser's clock,
//     which it stamps in the released_at header.
//   - Nothing lost, across restarts and rebalances: a tier's committed offset per partition is
//     its lowest held record, and revoked partitions are dropped without committing, so
//     whatever was held is read again by the next owner.
//   - Nothing released twice by a crash: released records and the tier offsets commit in one
//     Kafka transaction (a franz-go GroupTransactSession whose offset commit is rewritten), and
//     the commit's metadata says which records above the committed offset were already
//     released (holding.go). If that description outgrows Kafka's metadata limit it is cut
//     conservatively: a restart may then release a record twice, never lose one.
//   - Once per retry: records of one retry (delivery id, attempt number, trigger, deferrals)
//     that a repeated Schedule or Defer left in a tier are released once; a copy read before
//     the release, or due at exactly the released due time, is committed as released without
//     being written (holding.go says when a copy can still get through: at least once).
//   - Bounded memory: at most LookAheadRecords / LookAheadBytes per tier wait in memory, sorted by
//     due time; partitions whose share is full are paused, and the rest of the backlog stays in
//     Kafka. The poll loop never sleeps; its poll deadline is the next due time.
//
// Under normal load a record is released within tens of milliseconds of its due time (see
// `make bench-retry`). When a tier's backlog exceeds its look-ahead, a record not yet read can
// be due before records buffered ahead of it and is then released late; size the look-ahead
// to the backlog a tier is expected to hold.
package retrytopics
