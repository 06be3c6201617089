// Package streams holds the Kafka stream processors between cdc and the sender: fanout turns
// each event into one delivery record per active, subscribed endpoint of the event's own partner
// (R11, R13, R14), matched against an endpoints.View, and the recorder writes every attempt the
// sender reports into PostgreSQL as searchable history (R18), checking each attempt's endpoint
// against PostgreSQL, not against a view.
package streams
