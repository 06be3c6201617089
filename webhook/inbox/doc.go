// Package inbox is the receiving end of webhooks, for partners to embed in their own Go
// service (R29): http.Handlers that verify, validate and durably store each event once, keyed
// by (source, event id), and a processor that checks the event is still allowed and hands it
// to the application inside the transaction that marks it processed.
//
// # Receiving
//
// [New] makes an Inbox whose [Inbox.ServeHTTP] receives hookstream's webhooks (source
// "hookstream"); [Inbox.Handler] adds a handler for another provider, named by a [Source]
// with its [webhook.RequestVerifier] (GitHub, Stripe, Slack, Shopify, Twilio, or any Standard
// Webhooks sender), into the same table and Run loops; [Open] makes an Inbox for other
// providers only. Mount each handler on its own path, and [Inbox.UnknownSource] on their
// common prefix: a request for a source the inbox does not receive is answered 404 and
// counted apart from verification failures.
//
// A handler reads the raw body (at most Config.MaxBodyBytes, 1 MiB by default, else 413),
// verifies the signature over those exact bytes (several secrets during a rotation, R17;
// timestamp tolerance 5 minutes by default where the scheme signs one) and answers 401 with a
// short reason when that fails, a missing header included: a request without a signature is
// unauthenticated, and 400 is kept for a payload that was authenticated but is wrong. Only
// then is the body parsed: for hookstream, the envelope ([outbox.Envelope.Validate]; the
// event_id must equal the webhook-id header; unknown fields are accepted, since schema changes
// are additive, R31) and Config.ValidatePayload; for another source, its event id (400 when
// the request names none) and Source.Validate. Finally the event is inserted under the
// primary key (source, id) with the SHA-256 of its body, and the answer is 204 once the row is
// committed: a 2xx means the receiver durably accepted the event, nothing more. A copy of a
// stored event is not stored again: with the same body it is answered 204, or 200 with the
// stored result once it was processed with one ([Event.SetResult]); with a different body
// it is answered 409, counted and never processed, since it is not the event that was stored.
// When the event cannot be stored the answer is 503, so the sender retries it.
//
// # Processing
//
// [Inbox.Run] claims due rows with SELECT … FOR UPDATE SKIP LOCKED, so any number of Run loops
// in any number of processes share the work, and for each event calls Config.Authorize, when
// set, and then the application's [ProcessFunc] with the transaction that marks the row
// processed. The application's writes through it and the state change commit together: each
// event has its effect in this database exactly once. Effects elsewhere (an e-mail, a call to
// another API) are at least once and need their own idempotency key; the source and event id
// are a good one.
//
// A row is in one of five states, kept explicit by CHECK constraints:
//
//   - received: stored after its signature verified, and due. The ledger row is the queue
//     entry, written in one statement (one commit for both), so no row waits between "stored"
//     and "queued": the received, verified and queued steps of a receiving pipeline are this
//     one state. While a Run loop processes it the row stays received under the loop's row
//     lock (the pipeline's running step): a crash rolls the attempt back and frees the row for
//     another instance, uncounted, rather than leaving a "running" row to be found and reset.
//   - retrying: an attempt failed (a panic included); the next is due after exponential
//     backoff from Config.FirstRetryDelay up to Config.MaxRetryDelay, and last_error says why.
//   - processed: done, with processed_at and the result, if any.
//   - dead: Config.MaxAttempts attempts failed; it waits for an operator.
//   - refused: the application refused it (ErrRefused): final, never retried.
//
// A failed attempt is rolled back, with its writes, before the failure is recorded. When the
// context given to Run ends, an event being processed is rolled back and not counted as an
// attempt: it will be processed again, by this or another instance. The age of the oldest row
// in received (a metric below) shows events stuck unprocessed.
//
// # Authorization after verification
//
// A valid signature proves that the provider sent these bytes; it does not prove that the
// organisation, customer, repository or channel the event names may still do what it asks.
// Config.Authorize is the place to check that against current permissions, just before the
// effect and in its transaction (R30: check the permission at the time of acting, not the one
// at reception):
//
//   - Read the permission through tx, with FOR SHARE on its row, so it cannot be revoked
//     between the check and the commit of the effect.
//   - Refuse with an error wrapping [ErrRefused]: the event is refused, with the error kept as
//     last_error, and not retried; granting the permission later does not revive it (deliver
//     the event anew, or reset the row, if it should run after all).
//   - Any other error means the decision could not be made (the permission service is down):
//     the attempt fails and is retried like any other.
//
// A ProcessFunc may refuse with ErrRefused too, for input it finds invalid only while applying
// it; its writes are rolled back. See the AuthorizeFunc example.
//
// # Duplicates and stale events (R30)
//
// Two jobs keep a receiver correct, and only the first is the inbox's:
//
//   - Deduplication by (source, event id). Providers deliver at least once, and their retries
//     carry the id of the first delivery (hookstream's manual replays too), so the primary key
//     turns every later copy into a no-op. Rows are kept for Config.Retention after they
//     finish (30 days by default, hookstream's default replay window; replay_window_seconds in
//     GET /v1/limits); set it no shorter than any source redelivers: an event redelivered
//     after its row is purged is processed again. Dead rows are not purged.
//   - Newer wins, by resource version: the application's job. Events are not ordered, and two
//     changes of one resource are two events with two ids, so an older change can arrive after a
//     newer one. Compare the resource version in the event (data.version of customer.updated;
//     occurred_at where an event has none) with the stored one and write only a newer one, in the
//     same statement (see the package example). A stale event is then processed and changes
//     nothing.
//
// The body hash compares raw bytes. A provider that renders an event anew for each attempt
// (a Stripe event carries a pending_webhooks count) could send a retry whose bytes differ; it
// would be answered 409 and counted as a body mismatch while the stored copy is processed as
// usual. Watch hookstream_inbox_body_mismatches_total for such a source before alerting on it.
//
// # Metrics
//
// With Config.Registerer set, the inbox exports (each labelled by source):
// hookstream_inbox_verification_failures_total{reason},
// hookstream_inbox_timestamp_outside_tolerance_total{direction="past"|"future"},
// hookstream_inbox_clock_skew_seconds (a histogram of now minus the signed time),
// hookstream_inbox_received_total, hookstream_inbox_duplicates_total,
// hookstream_inbox_body_mismatches_total, hookstream_inbox_refused_total,
// hookstream_inbox_processing_seconds{outcome="processed"|"failed"|"dead"|"refused"},
// hookstream_inbox_rows{state} and hookstream_inbox_oldest_row_age_seconds{state} (read from
// the table at scrape time, every state but processed), hookstream_inbox_purged_total, and,
// without a source label, hookstream_inbox_unknown_source_requests_total (requests for a
// source the inbox does not receive).
// deploy/monitoring/receiver-alerts.yml has example alerts on them.
//
// # The table
//
// [Migrate] creates the table from [Schema], or upgrades one made by an earlier version in
// place; partners with their own migration tool may copy Schema instead (every statement is
// idempotent). Try a dead event again once its cause is fixed with:
//
//	UPDATE webhook_inbox SET state = 'retrying', attempts = 0, next_attempt_at = now()
//	 WHERE source = 'hookstream' AND id = 'evt_…' AND state = 'dead';
package inbox
