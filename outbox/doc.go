// Package outbox is the public writer of hookstream's transactional outbox (R9).
//
// A platform records a business event by calling Append inside the same pgx transaction as the
// state change it describes. The event becomes visible to hookstream only if that transaction
// commits: cdc tails the outbox table by logical replication (R10), so a rolled-back transaction
// leaves nothing behind, and a committed one is delivered even if every hookstream process dies
// right after the commit.
//
// Append validates the event first and refuses bad input with a *ValidationError that wraps one of
// the sentinel errors (ErrMissingPartner, ErrInvalidType, ErrMissingSubject, ErrInvalidData,
// ErrPayloadTooLarge), writing nothing. Each event gets an immutable id, "evt_" followed by a ULID,
// which stays the same across every retry and replay (R1) and becomes the webhook-id header. One
// id is one event: PostgreSQL refuses a second outbox row with an id it holds, whoever writes it,
// within the outbox retention, and Append reports it as ErrDuplicateEventID. AppendAll writes
// many events of one transaction in one statement, checked and published as if appended in turn.
//
// A Writer with a Catalog also checks each event against the published schema of its type
// before writing (R4, R31); package eventcatalog provides that Catalog, so a platform writes
// with outbox.Writer{Catalog: c} where c comes from eventcatalog.New.
//
// The Envelope type is the JSON shape partners receive (R8); cdc builds it from the outbox row and
// serialises it exactly once.
package outbox
