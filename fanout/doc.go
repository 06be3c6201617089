// Package fanout is the room between cdc and the sender: it reads the events topic and turns
// each event into one delivery record per active, subscribed endpoint of the event's own
// partner (R11, R13), in the endpoint's pinned schema version (R14) and past its payload filter,
// matched against a view of the endpoints topic. It consumes and produces in Kafka
// transactions, so every event is fanned out exactly once, whatever restarts; an event record it
// cannot read goes to the dlq.
package fanout
