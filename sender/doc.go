// Package sender delivers delivery records over HTTP as Standard Webhooks requests: signed over
// the exact bytes sent (R15), through the egress guard (R26, R27), with per-endpoint
// concurrency, rate limits and circuit breakers so one bad receiver never slows the others
// (R21). Every attempt is reported to the attempts topic; the sender never connects to
// PostgreSQL (R28).
//
// # Flow
//
// A [Sender] consumes <prefix>.deliveries in the consumer group <prefix>.sender. Each record is
// decoded and checked (a record that can never be delivered goes to <prefix>.dlq with the
// reason); a record not yet due is handed back through [Retrier.Defer]; the rest go to the
// lane of their endpoint. Before each request the endpoint is checked again against the
// endpoint view (R13): a record naming another partner's endpoint or carrying another
// partner's event is never sent and is recorded as category tenant_mismatch; a disabled
// endpoint is not sent and is recorded as a failed attempt of category endpoint_disabled, one no
// longer subscribed to the type as category internal, each with the reason in the excerpt, and
// neither is retried (re-enabling does not resurrect refused deliveries, a replay does).
// Test deliveries skip only the subscription check. A test or replay record carries the
// endpoint version the admin API answered with (records.Delivery.EndpointVersion): it is sent
// only once the view holds that version or a later one, waited for up to 10 s, else deferred
// (reason stale_view), so a rotation, URL change or any other change is in effect for every test
// and replay asked for after it (read-your-writes). The request carries one signature
// per active secret (R17), opened with [secretbox] under the row's AAD, and the endpoint's request
// options: its extra headers, its authentication (a header secret, HTTP basic, or an
// OAuth 2.0 client-credentials token, cached and fetched again once on a 401), its client
// certificate and its proxy route, opened once per change of the endpoint record; the
// endpoint's own secrets are redacted by value from the evidence, in every encoding they are sent
// or echoed in. The outcome is
// classified by [Classify]; a retryable failure is handed to [Retrier.Schedule]; then one
// attempt record (key delivery_id) carries the evidence, and the endpoint's circuit as the
// result left it (Circuit, CircuitProbeAt, CircuitAt): the recorder keeps it, and the admin API
// shows a state that lives only here. At least once: a crash after the request and before
// the attempt record delivers the event again with the same webhook-id.
//
// # Isolation and flow control
//
// Records of one partition are processed concurrently across endpoints. Each endpoint has a
// lane: a bounded FIFO queue (Config.QueueSize records waiting for a worker) served by an
// adaptive number of workers, each waiting on the endpoint's rate limit when it has one. A
// worker holds a slot only for the request; reporting to Kafka runs beside it.
//
// Concurrency adapts per endpoint (AIMD): it starts at Config.InitialInFlight (8), rises by one
// per round of as many requests while work waits and the mean latency of the round's successes
// stays within twice the endpoint's baseline (its lowest latency in the last 30 s) plus 10 ms,
// is cut by 10 % after a round whose successes slowed down, never below where it started (on a
// busy host a fast receiver slows with the host's stalls, not with our requests) nor below what
// carries the endpoint's demand (the records offered to it a second, counted each second) at
// the latency a round may have before it counts as slowed (a cut below that only moves the
// wait from the receiver into the lane's queue), and halved
// after a round more than half of which failed, and never leaves [1, max_in_flight]; max_in_flight (default 64) is the
// ceiling, not the target. Occasional failures (a receiver's 500s or timeouts among good
// answers) do not cut it: the breaker and the retry schedule deal with them. A request out for
// longer than 20 times the baseline, and at least a second, is a straggler: it no longer counts
// against the limit, so another may start in its place (never above max_in_flight). A receiver
// that leaves one request in 500 hanging until the 15 s timeout would otherwise lose about 15
// slots at 500 requests/s and stall although it answers the rest at once.
//
// The flow control tells a busy endpoint from a bad one. When a lane's queue is full:
//   - an endpoint that keeps up (a slot frees at least every Config.MaxSlotWait, 20 ms: the
//     smoothed gap between its request ends while work waits, estimated from its request time
//     over its concurrency until measured; and its rate limit's interval) is fed at its pace:
//     its record waits for room. Each partition's records are offered to their lanes in offset
//     order by a feeder of the partition's own, so the wait holds back that partition only;
//     intake goes on taking records for the others, and stops polling only at the buffer caps
//     below (nothing fetched is dropped or fetched again). A burst flows at the rate the
//     endpoint accepts and is never deferred, and a burst to one endpoint never idles another;
//   - a deferral exists only to spare the endpoint's neighbours: while waiting holds back no
//     other endpoint's records of the partition (none waits behind in its feeder, and its
//     fetching is not paused after it carried other endpoints' work), the record waits for
//     room however slow the endpoint is while it makes progress, its partition's backlog
//     bounded by the pause below; a stalled lane (requests out, none ended for
//     Config.StallAfter) defers its overflow all the same, once stalled for
//     Config.MaxIntakeWait, so that a hanging endpoint alone on its partition cannot take the
//     buffer every other partition needs (a paused partition still hands out what the client
//     had fetched for it);
//   - with a neighbour held back, an endpoint for which no room comes within
//     Config.MaxIntakeWait (500 ms), or that has been slower, or had requests out with none
//     ending for Config.StallAfter (250 ms, a hanging receiver, caught before its first
//     timeout), for Config.MaxIntakeWait without a break, has the record deferred to a retry
//     tier without counting an attempt, and the rest of its overflow too until its queue has
//     drained to half. A moment's stall of the whole machine is ridden out; one endpoint's
//     backlog never holds the others of the partition back for longer than about one such
//     wait.
//
// Partners share the sender fairly (partners.go, design.md section 7): every request passes its
// partner's gate, at most Config.PartnerMaxInFlight out at once and Config.PartnerRatePerSec a
// second for all its endpoints together; a partition's records are fed by a feeder per partner,
// so one partner's full lanes never hold another's records back; and once the buffer is crowded
// a partner holds at most an equal share of it, its overflow deferred (reason partner_share) on a
// partition another partner uses, and waiting in Kafka (the partition's fetching paused) on one
// it has alone.
//
// A circuit breaker opens after Config.BreakerFailures consecutive failed attempts; while open,
// new work is deferred the same way; after Config.BreakerCooldown (10 s) one probe goes out,
// and its success closes the circuit. The cooldown is what a receiver back from an outage waits
// at most before its backlog flows again (make bench, workload d), so it is short: a dead
// endpoint costs one probe per cooldown. Records taken from Kafka and not finished are capped in number
// and bytes across all lanes (Config.MaxBuffered, Config.MaxBufferedBytes): at the cap intake
// stops polling (the Kafka client keeps the one fetch it holds and fetches no more), at half of
// it intake goes on; so memory stays bounded with any backlog.
//
// # Offsets
//
// Offsets are committed by hand, per partition, up to the lowest unfinished record, every
// Config.CommitInterval (100 ms), on revocation and at shutdown. A record is finished when its
// outcome is durably in Kafka: the attempt record (and the retry hand-off) acknowledged, the
// deferral or dead letter written. Each commit's metadata also lists the records above that
// mark that are finished, as runs (finished.go), and the partition's next owner passes over
// them: a killed sender's successor sends again what was in flight and what finished in the
// last interval, not everything above a record one slow endpoint still holds. On revocation the partition stops taking work, its queued records
// are dropped, running requests get Config.ShutdownGrace to finish, and the commit never
// passes what is still unfinished, so the next owner delivers it again. Shutdown does the
// same for every partition, then leaves the group.
//
// # Ordered endpoints
//
// An endpoint with ordered=true gets one request at a time, in offset order (its records share
// a partition, keyed by endpoint id). A failing record stays at the head and is retried in
// process, each attempt reported as retrying with its next attempt time and the hold it leaves
// (records.OrderHold), while the endpoint's later records wait behind it. Its offset stays
// unfinished, so a crash or rebalance delivers it again, first. Bounded mode: a backoff from
// Config.OrderedBackoff doubling up to Config.OrderedMaxBackoff (or the receiver's Retry-After
// if longer), for at most Config.OrderedMaxHold; then the head is handed to the retry tiers like
// any failure and the next record proceeds, so a longer outage breaks the order rather than
// stall the partition's commits for days. Strict mode (strict_order): the waits and the number
// of attempts are the endpoint's retry schedule ([Retrier.Next]), with no time limit; the order
// gives way only when the head fails for good, and that attempt carries order_broken. Limits,
// by design: while a head is held, a restart redelivers what other endpoints of the partition
// finished meanwhile (duplicates, which the contract allows); records beyond the endpoint's
// queue are deferred and can come back out of order; ordered endpoints have no circuit breaker
// (the single held request is one already). ordering.go has the details.
//
// The files follow the way of a record: sender.go (New, Run and the poll loop), intake.go
// (intake, the partners' feeders, flow control into the lanes, the buffer caps), partners.go
// (the partners' gates and shares of the buffer), lane.go and
// concurrency.go (an endpoint's lane and its adaptive limit), admission.go (a lane's workers and
// what may be sent now), delivery.go (the request and its outcome, made durable in Kafka),
// assignment.go (partitions assigned, revoked and lost; offset commits), partition.go (the
// unfinished offsets of one partition), breaker.go, classify.go, post.go and the request
// options.
package sender
