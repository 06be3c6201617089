// Package localinfra runs the PostgreSQL cluster of deploy/local/pg.sh and the Kafka brokers of
// deploy/kafka/kafka.sh for the programs and tests that crash and restart them (the chaos run,
// internal/testkit/cluster): it picks their ports below the kernel's ephemeral range, runs the scripts
// within a bound with their output logged, kills a service's process with SIGKILL and waits until
// it is gone, and starts a guard process that stops the services when its parent dies, however it
// dies.
//
// It knows nothing of hookstream: only the scripts' interface (their actions, HOOKSTREAM_DATA_DIR,
// KAFKA_LIBS and the port variables a caller adds).
package localinfra
