// Package eventcatalog is the published event catalog of the reference platform, an AI API
// reseller (R4): the event types partners can subscribe to, each with a description, a schema
// version, the JSON Schema (draft 2020-12) of its data and an example, plus the schema of the
// envelope every event arrives in (R8). The admin API serves it at GET /v1/event-types.
//
// A platform writes events through outbox.Writer{Catalog: c} with c from New, so an event whose
// type is unknown, whose schema version is not the published one, or whose data breaks the
// schema is refused at Append time with a *outbox.ValidationError, inside the caller's
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
//     the catalog) and an ISO 4217 currency; hookstream never rounds it (R7). The precision
//     and rounding rules are published in the schemas' descriptions (MoneyPrecision,
//     PercentPrecision).
//   - Timestamps are RFC 3339 date-times, and the Catalog asserts format "date-time" although
//     draft 2020-12 makes it only an annotation: what a partner parses is checked when written.
//   - Schemas accept additional properties, so adding an optional field is a compatible change
//     within a schema version; anything else gets a new version (R31). Schemas are versioned
//     apart from the admin API's responses.
//   - The published bytes are stable: Types, Lookup and EnvelopeSchema return copies, and the
//     Catalog checks exactly the schemas they return.
package eventcatalog
