// Package datalog proves docs/consuming-the-log.md with the tools data teams read the event log
// with: kcat (read_committed and read_uncommitted, one partition with -p), a Python
// confluent-kafka consumer running the doc's own snippets, and Kafka Connect with Debezium's JDBC
// sink upserting the events topic into PostgreSQL, all installed from the registries by
// deploy/datalog/connect.sh. Its test (build tag datalog, `make test-datalog`) runs cdc as
// processes on the real broker under load, SIGKILLs the active one mid-transaction twice, and
// holds every reader to the committed events: each exactly once, and nothing else.
package datalog
