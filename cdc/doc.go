// Package cdc tails the outbox by logical replication (pgoutput over a permanent slot) and
// publishes each committed event to the partner-partitioned events topic, and each endpoint
// change to the compacted endpoints topic, exactly once across crashes (R10, R12; design.md
// sections 2, 5 and 6). The slot's confirmed position advances only after the Kafka transaction
// holding those changes has committed. A transaction commits in the background while the
// stream goes on: the rows that arrive meanwhile are decoded, checked and queued for the next
// transaction, which opens when the commit returns, so a slow commit under a burst does not
// stop cdc reading the slot.
//
// Only events of the published catalog reach the events topic: a row that is no valid envelope,
// is too large, has a type the catalog does not know or data its type's schema refuses is
// dead-lettered instead, to the dlq topic and to the outbox_dead_letter table the operator lists
// (GET /v1/outbox/dead-letters), each once across crashes; the stream goes on.
package cdc
