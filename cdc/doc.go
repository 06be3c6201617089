// Package cdc tails the outbox by logical replication (pgoutput over a permanent slot) and
// publishes each committed event to the partner-partitioned events topic, and each endpoint
// change to the compacted endpoints topic, exactly once across crashes (R10, R12; design.md
// sections 2, 5 and 6). The slot's confirmed position advances only after the Kafka transaction
// holding those changes has committed.
package cdc
