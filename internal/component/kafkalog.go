package component

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaLogger passes franz-go's warnings and errors to log, the component's logger, as records
// of the same level whose message starts with "kafka: " and whose attributes are franz-go's
// key-value pairs. franz-go's info and debug messages (every connection, every request) are
// not asked for.
func KafkaLogger(log *slog.Logger) kgo.Logger { return kafkaLogger{log} }

type kafkaLogger struct{ log *slog.Logger }

func (l kafkaLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l kafkaLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelWarn
	if level == kgo.LogLevelError {
		lv = slog.LevelError
	}
	l.log.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}

// ClientOptions returns the options of one franz-go client of the component: its seed
// brokers, franz-go's warnings and errors logged to log (the component's logger, see
// KafkaLogger), then opts, then KafkaOptions, which so win over the component's own.
func (b Base) ClientOptions(log *slog.Logger, opts ...kgo.Opt) []kgo.Opt {
	out := make([]kgo.Opt, 0, 2+len(opts)+len(b.KafkaOptions))
	out = append(out, kgo.SeedBrokers(b.Brokers...), kgo.WithLogger(KafkaLogger(log)))
	out = append(out, opts...)
	return append(out, b.KafkaOptions...)
}
