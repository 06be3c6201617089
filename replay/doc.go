// Package replay is the replay engine (R24, design.md section 8): it makes new attempts of
// deliveries that already happened, never new events. One replays a single delivery's event at
// its endpoint; bulk replays are jobs in replay_job that Run executes, from the endpoint's
// delivery history (SourceHistory) or from its partner's partition of the events topic
// (SourceLog). The admin API queues jobs (Queue), reads, lists and cancels them, and answers
// for the engine over HTTP; the engine knows nothing of HTTP. It knows the admin API only as
// the process it runs in: its metrics keep their hookstream_admin_ names.
//
// Guarantees:
//   - A replay keeps the event id and the delivery id and takes the next attempt number, never
//     one an automatic attempt may take (attempts.go); the numbers are reserved in PostgreSQL
//     before anything is produced.
//   - Its body is the event's exact envelope, from the outbox while it holds the event, else
//     from the events topic (Envelopes), in the schema version the endpoint is pinned to (R14).
//     A log replay sends only what the endpoint would have received: the partner's events of
//     its subscription that its payload filter accepts.
//   - Records go to the deliveries topic keyed by endpoint_id with trigger replay, carrying the
//     endpoint version read, so the sender never sends them with an older configuration.
//   - A job's counts and position are recorded after every step, so it survives restarts: a job
//     whose process stopped or died is resumed by another from its last recorded position. It
//     replays at most Config.MaxDeliveries deliveries, and fails with the reason when its
//     endpoint is deleted or disabled while it runs rather than produce refused replays.
//
// Errors say what went wrong in the engine's terms, for the caller to answer as it sees fit:
// ErrEndpointGone, ErrJobNotFound, ErrJobFinished, a *RefusedError for an event that cannot
// be replayed (ErrNotRetained when its envelope is retained nowhere any more), and
// ErrUnavailable (or eventlog.ErrUnavailable) for a Kafka failure a caller may retry.
package replay
