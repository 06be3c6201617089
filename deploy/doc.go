// Package deploy holds no Go code of its own: it is the home of the scripts that run
// hookstream's infrastructure on one machine (local/pg.sh for PostgreSQL, kafka/kafka.sh for a
// real Apache Kafka broker) and, later, manifests, dashboards and alerts.
package deploy
