// Package streams holds the Kafka stream processors between cdc and the sender: fanout turns
// each event into one delivery record per active, subscribed endpoint of the event's own partner
// (R11, R13, R14), and the recorder writes every attempt the sender reports into PostgreSQL as
// searchable history (R18). Both keep an in-memory view of the endpoints topic.
package streams
