// Package deploy holds no Go code of its own but tests: it is the home of the scripts that run
// hookstream's infrastructure on one machine (local/pg.sh for PostgreSQL, local/dev.sh for make
// dev, kafka/kafka.sh for a real Apache Kafka broker), the image (Dockerfile), the compose and
// Kubernetes manifests (compose/, k8s/), the alerts and dashboard (monitoring/) and the runbook
// (README.md). Its own tests (local_test.go) run pg.sh beside another cluster, dev.sh with a
// given database, and make dev stopped by Ctrl-C; cmd/hookstream's tests hold the manifests and
// the alerts to the binary.
package deploy
