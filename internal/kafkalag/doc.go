// Package kafkalag exports the consumer lag of a component's own consumer groups, so an operator
// needs no separate Kafka exporter to see how far fanout, the senders, the recorder and the
// retry tiers are behind (R35).
//
// Every interval a Monitor reads, for each (group, topic) it was given, the group's committed
// offsets and the topic's last stable offsets (the end a read_committed consumer can reach:
// records of a transaction still open are not counted), and sets
// hookstream_kafka_consumer_lag_records{group,topic} to the sum over the topic's partitions of
// end minus committed. A partition the group never committed to counts from the log start,
// where hookstream's consumers begin (ConsumeResetOffset AtStart).
//
// What it guarantees:
//   - The labels are the fixed set given in Config, so cardinality does not grow with traffic.
//   - A check that fails (broker down, topic missing, group coordinator loading) is counted in
//     hookstream_kafka_consumer_lag_checks_failed_total and logged once for that check; the
//     gauges of the pairs it could not measure keep their last value. A failing check is never
//     an error of the component: Run only returns when its context ends.
//   - On a topic written in transactions the commit marker after the last record takes an
//     offset, so a group that has read everything can read as up to one record behind per
//     partition. Alerts look at growth, not at zero.
//
// It does not export a time-based lag: that needs the timestamp of the first unconsumed record
// of each partition, a fetch per partition from its leader, which kadm does not offer; the
// records gauge and its rate answer "is it keeping up".
package kafkalag
