// Package recorder is the room after the sender: it writes every attempt the sender reports
// on the attempts topic into PostgreSQL as searchable delivery history (R18), checking each
// attempt's endpoint against PostgreSQL, not against a view (R13). It also writes the pending
// row of every delivery fanout emitted that is not attempted soon (design.md section 4), keeps
// endpoint health and failing_since, disables an endpoint that answered 410 Gone (R20, R23),
// and deletes history older than the retention (R33, ExpireHistory).
package recorder
