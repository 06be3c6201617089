// Package inbox is the receiving end of hookstream webhooks, for partners to embed in their own
// Go service (R29): an http.Handler that verifies, validates and durably stores each event once,
// and a processor that hands every stored event to the application inside the transaction that
// marks it processed.
//
// # The handler
//
// [Inbox.ServeHTTP] reads the raw body (at most Config.MaxBodyBytes, 1 MiB by default, else
// 413), verifies the Standard Webhooks headers over those exact bytes with a [webhook.Verifier]
// (several secrets during a rotation, R17; tolerance 5 minutes by default), and answers 401 with
// a short reason when that fails, a missing header included: a request without a signature is
// unauthenticated, and 400 is kept for a payload that was authenticated but is wrong. It then
// checks the envelope hookstream sends ([outbox.Envelope.Validate]; the event_id must equal the
// webhook-id header; unknown fields are accepted, since schema changes are additive, R31) and
// the optional Config.ValidatePayload hook, answering 400 when either refuses. Finally it inserts
// the event under the primary key on its id and answers 204 once the row is committed, as the
// delivery contract requires: a 2xx means the receiver durably accepted the event, nothing more.
// A duplicate (the same webhook-id again) is answered 204 and not stored twice. When the event
// cannot be stored the answer is 503, so hookstream retries it.
//
// # The processor
//
// [Inbox.Run] claims due rows with SELECT … FOR UPDATE SKIP LOCKED, so any number of Run loops in
// any number of processes share the work, and calls the application's [ProcessFunc] with the
// transaction that marks the row processed. The application's writes through it and the state
// change commit together: each event has its effect in this database exactly once. Effects
// elsewhere (an e-mail, a call to another API) are at least once and need their own idempotency
// key; the event id is a good one.
//
// Rows have explicit states (a CHECK constraint keeps them so): received → processed, or, after
// a failure, retrying (with exponential backoff from Config.FirstRetryDelay up to
// Config.MaxRetryDelay) → processed, or dead after Config.MaxAttempts failures, with the last
// error kept. A failed attempt, a panic included, is rolled back, with its writes, before the
// failure is recorded. When the context given to Run ends, an event being processed is rolled
// back and not counted as an attempt: it will be processed again, by this or another instance.
//
// # Duplicates and stale events (R30)
//
// Two jobs keep a receiver correct, and only the first is the inbox's:
//
//   - Deduplication by webhook-id. hookstream delivers at least once, and its retries and manual
//     replays carry the webhook-id of the first delivery, so the primary key turns every later
//     copy into a no-op. Keep processed rows at least as long as hookstream's replay window
//     (replay_window_seconds in GET /v1/limits, 30 days by default): an event replayed after its
//     row is deleted is processed again.
//   - Newer wins, by resource version: the application's job. Events are not ordered, and two
//     changes of one resource are two events with two ids, so an older change can arrive after a
//     newer one. Compare the resource version in the event (data.version of customer.updated;
//     occurred_at where an event has none) with the stored one and write only a newer one, in the
//     same statement (see the package example). A stale event is then processed and changes
//     nothing.
//
// [Migrate] creates the table from [Schema], which partners with their own migration tool may
// copy instead. The inbox deletes nothing; prune processed rows past the replay window, and try
// a dead event again once its cause is fixed, with:
//
//	DELETE FROM webhook_inbox WHERE state = 'processed' AND processed_at < now() - interval '30 days';
//	UPDATE webhook_inbox SET state = 'retrying', attempts = 0, next_attempt_at = now()
//	 WHERE id = 'evt_…' AND state = 'dead';
package inbox
