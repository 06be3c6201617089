package component

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaLogger passes franz-go's warnings and errors to log, the component's logger, as records
// of the same level whose message starts with "kafka: " and whose attributes are franz-go's
// key-value pairs. When log takes debug records (HOOKSTREAM_LOG_LEVEL=debug), franz-go's info
// messages come too, as debug records: each transaction's start and end, each metadata refresh
// and why, each produce error and retry. franz-go's own debug messages (every request written
// and read) are never asked for.
func KafkaLogger(log *slog.Logger) kgo.Logger {
	// The process's log level is set once at start, and franz-go asks Level on hot paths (every
	// produce response), so it is decided here.
	level := kgo.LogLevelWarn
	if log.Enabled(context.Background(), slog.LevelDebug) {
		level = kgo.LogLevelInfo
	}
	return kafkaLogger{log, level}
}

type kafkaLogger struct {
	log   *slog.Logger
	level kgo.LogLevel
}

func (l kafkaLogger) Level() kgo.LogLevel { return l.level }

func (l kafkaLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var lv slog.Level
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	case kgo.LogLevelInfo:
		lv = slog.LevelDebug
	default: // franz-go's debug messages: every request written and read
		return
	}
	l.log.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}

// ClientOptions returns the options of one franz-go client of the component: its seed
// brokers, franz-go's log passed to log (the component's logger, see KafkaLogger), then opts,
// then KafkaOptions, which so win over the component's own.
func (b Base) ClientOptions(log *slog.Logger, opts ...kgo.Opt) []kgo.Opt {
	out := make([]kgo.Opt, 0, 2+len(opts)+len(b.KafkaOptions))
	out = append(out, kgo.SeedBrokers(b.Brokers...), kgo.WithLogger(KafkaLogger(log)))
	out = append(out, opts...)
	return append(out, b.KafkaOptions...)
}
