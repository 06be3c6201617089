package testenv

import (
	"testing"

	"github.com/hookstream/hookstream/internal/topics"
)

// Env is one test's PostgreSQL database, Kafka cluster and hookstream topics: what the
// components between the outbox and the deliveries topic (cdc, fanout, recorder) run on.
type Env struct {
	DB    *Database
	Kafka *Kafka
	Names topics.Names
}

// NewEnv makes a fresh database and Kafka for the test and creates every hookstream topic
// under the test's prefix.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	return NewEnvOn(t, NewKafka(t))
}

// NewEnvOn is NewEnv on a cluster the test made itself (NewRestartableKafka).
func NewEnvOn(t testing.TB, k *Kafka) *Env {
	t.Helper()
	e := &Env{DB: NewDatabase(t), Kafka: k}
	e.Names = k.CreateTopics(t)
	return e
}
