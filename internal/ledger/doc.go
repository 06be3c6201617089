// Package ledger checks a hookstream installation's promises from the outside (R2, R10, R11,
// R13, R15, R18): from the committed outbox rows and the endpoints' subscriptions it computes
// which (event, endpoint) pairs had to be delivered (rows cdc refused, listed in
// outbox_dead_letter, are never published and expected nowhere), and compares that with the delivery history
// (`delivery`, `delivery_attempt`) and, when given, with what the receivers recorded of every
// request. `hookstream verify-ledger` runs it against a deployment; `make chaos` runs it after
// its faults.
//
// # The expected set
//
// An event must reach an endpoint when the endpoint belongs to the event's partner, is subscribed
// to its type (an exact type, `prefix.*` or `*`, by its current event_types: changes of the list
// are not tracked), and was active when the event occurred. The database keeps no status
// history, so activity is reconstructed from what it does keep:
//
//   - the endpoint exists from created_at; events within Options.Boundary of it are "boundary"
//     pairs (the commit order of the two transactions decides, and occurred_at does not show it)
//     and are required neither way; earlier events are never delivered;
//   - an endpoint is disabled at the occurred_at of its first `endpoint.disabled` outbox event
//     (every disabling path emits one), or at updated_at when there is none. Pairs of events
//     before that moment are "excused" while the endpoint stays disabled (disabling drops the
//     work still pending); events after it are not expected. An endpoint that is active again
//     was re-enabled at some moment before updated_at (enabling emits no event): events between
//     the disable and updated_at are excused, later ones are required again.
//
// # What is counted
//
// With receipts a required pair is missing when no receiver accepted it (answered 2xx); without
// them, when its delivery is not `succeeded`. The must-be-zero counts (Report.Failures) are:
// missing, foreign partner (a request carried an event of another partner than the endpoint's),
// bad signatures, webhook-id not the event id, requests naming an event no published outbox row has,
// deliveries to an endpoint not subscribed to the type, pairs received but absent from the
// history, and final states that contradict the receivers: a delivery `succeeded` that no
// receiver accepted, an attempt recorded with a 2xx its receiver did not give, or a delivery not
// `succeeded` whose last acceptance matches no recorded attempt. (A 500 answered to a duplicate
// after an acceptance contradicts nothing: the event was accepted, the history says so.)
// Receipts are matched to attempts by time (Options.ClockSkew). Requests seen by a receiver
// that match no recorded attempt are counted apart: a sender killed between the POST and its
// attempt record leaves some, at most its in-flight requests (Options.MaxUnrecorded), and a
// request made again after an outage with the attempt number it had before is dropped by the
// recorder as a repeat of that attempt.
//
// Duplicates (a pair accepted more than once) are classified by cause, first match wins:
// replay (the later request is a recorded replay or test attempt), kill (a sender or broker
// outage in Options.Outages lies between the two requests), late answer (the earlier acceptance is
// recorded as a failed attempt: the sender gave up before the 2xx reached it), unrecorded (the
// earlier acceptance matches no attempt: a crash or a lost offset commit, when no kills are
// known) and other.
package ledger
