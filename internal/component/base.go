// Package component holds what hookstream's Kafka components share: the settings every
// component's Config embeds (Base) and the adapter that sends franz-go's log to the component's
// logger (KafkaLogger).
package component

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/topics"
)

// Base holds the settings every Kafka component has: where its brokers are, its topic prefix,
// where it logs and registers its metrics, and extra franz-go options. A component's Config
// embeds it, so the fields read as the Config's own (cfg.Brokers, cfg.Prefix, ...).
type Base struct {
	// Brokers are the Kafka seed brokers.
	Brokers []string
	// Prefix is the topic prefix (design.md section 5).
	Prefix string
	// Logger gets the component's log, and franz-go's warnings and errors.
	Logger *slog.Logger
	// Registerer gets the component's metrics; nil: they are kept but not registered.
	Registerer prometheus.Registerer
	// Security are the TLS and SASL options of every Kafka connection (kafkasec.Config.Options,
	// built once per process); none: plaintext, unauthenticated.
	Security []kgo.Opt
	// KafkaOptions are extra franz-go options for every client of the component (e.g. for
	// tests); they come after the component's own, so they win.
	KafkaOptions []kgo.Opt
}

// DefaultBase returns the defaults of everything but the brokers: the default topic prefix and
// logger, no registerer.
func DefaultBase() Base {
	return Base{Prefix: topics.DefaultPrefix, Logger: slog.Default()}
}

// DefaultGroup is the consumer group of the component named name when its Config names none:
// "<prefix>.<name>", so the groups of two installations sharing a cluster never meet.
func (b Base) DefaultGroup(name string) string {
	return b.Prefix + "." + name
}

// Validate reports every setting of b a component cannot run with.
func (b Base) Validate() error {
	var errs []error
	if len(b.Brokers) == 0 {
		errs = append(errs, errors.New("no Kafka brokers"))
	}
	if b.Prefix == "" {
		errs = append(errs, errors.New("topic prefix is empty"))
	} else if err := topics.ValidatePrefix(b.Prefix); err != nil {
		errs = append(errs, err)
	}
	if b.Logger == nil {
		errs = append(errs, errors.New("logger is nil"))
	}
	return errors.Join(errs...)
}
