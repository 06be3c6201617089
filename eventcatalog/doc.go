// Package eventcatalog is the published event catalog of the reference platform, an AI API
// reseller (R4): the event types partners can subscribe to, each with a description and its
// schema versions, each version with the JSON Schema (draft 2020-12) of its data and an
// example, plus the schema of the envelope every event arrives in (R8). The admin API serves it at GET /v1/event-types.
//
// A platform writes events through outbox.Writer{Catalog: c} with c from New, so an event whose
// type is unknown, whose schema version is not one its type is published at, or whose data
// breaks that version's schema is refused at Append time with a *outbox.ValidationError, inside the caller's
// transaction, before anything is written; the transaction stays usable. cdc checks every outbox
// row against Published before it publishes it, so a row written around the checking writer
// (raw SQL, a Writer without a Catalog) that does not fit reaches no partner either: it is
// dead-lettered and listed for the operator.
//
// Guarantees:
//   - Payloads carry identifiers and minimal state: no property of a schema holds an API key, a
//     secret, a provider credential, a prompt or abuse evidence (R6). api_key_id is the key's
//     identifier and key_hint its last 4 characters, never the key; a test over the catalog
//     refuses such names and checks the shape of the few allowed ones. Schemas are open, so the
//     Catalog also refuses, anywhere in data, a property whose name holds a word of
//     ForbiddenWords (a key, secret, token, password, credential, cookie, session, prompt,
//     completion or evidence), declared or not; api_key_id and key_hint pass only with their
//     harmless shapes.
//   - Money is an object of a decimal string value (at most 6 decimals, no float anywhere in
//     the catalog) and an ISO 4217 currency, or, in usage.finalized from version 2, of an
//     integer count of millionths (amount_micros, the same 6 decimals) and the currency;
//     hookstream never rounds it (R7). The precision
//     and rounding rules are published in the schemas' descriptions (MoneyPrecision,
//     PercentPrecision).
//   - Timestamps are RFC 3339 date-times, and the Catalog asserts format "date-time" although
//     draft 2020-12 makes it only an annotation: what a partner parses is checked when written.
//   - Schemas accept additional properties, so adding an optional field is a compatible change
//     within a schema version; anything else gets a new version (R31), published beside the
//     old ones with what changed (EventType.Versions). Schemas are versioned apart from the
//     admin API's responses.
//   - Versions are catalog versions, and endpoints are pinned to one (R14): an endpoint pinned
//     to N receives each type in its newest version at or below N (PinnedVersion), converted
//     from the committed version by ConvertEnvelope, whose steps between adjacent versions are
//     pure functions (ConvertData) that change only the fields they name and refuse a value the
//     other version cannot hold. The catalog accepts every published version of a type.
//   - The published bytes are stable: Types, Lookup and EnvelopeSchema return copies, and the
//     Catalog checks exactly the schemas they return.
package eventcatalog
