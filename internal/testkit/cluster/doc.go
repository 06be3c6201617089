// Package cluster runs a three-broker Apache Kafka cluster on loopback for the tests that must
// see hookstream survive the loss of a broker (R12, R38): deploy/kafka/kafka.sh cluster on free
// ports with its data under a directory of the test's, every topic replicated three times with
// min.insync.replicas=2. Its tests (build tag cluster, `make test-cluster`) run the pipeline as
// separate processes on it under load while brokers are killed with SIGKILL one after the other,
// and fail over cdc from its active process to a standby.
package cluster
