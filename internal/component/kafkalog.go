package component

import (
	"context"
	"log/slog"
	"time"

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
// brokers and connection security (Security), franz-go's log passed to log (the component's logger, see KafkaLogger), a metadata
// refresh at most every metadataMinAge, then opts, then KafkaOptions, which so win over the
// component's own.
//
// The refresh: a produce answered with a retriable error (under KIP-890 also
// CONCURRENT_TRANSACTIONS, when a transactional producer writes right after its previous
// transaction ended) and the offset listing of a consumer's newly assigned partitions wait for a
// metadata refresh, which franz-go allows once per MetadataMinAge, 5 s by default. On the real
// broker that held cdc's events or fanout's deliveries for 3-5 s at a time in `make bench`. While
// a broker is down a failed refresh is retried after it too, so clients also find a restarted
// broker sooner. Retry backoffs keep franz-go's defaults (250 ms, growing to 2.5 s).
func (b Base) ClientOptions(log *slog.Logger, opts ...kgo.Opt) []kgo.Opt {
	out := append(b.ConnectionOptions(), kgo.WithLogger(KafkaLogger(log)), kgo.MetadataMinAge(metadataMinAge))
	out = append(out, opts...)
	return append(out, b.KafkaOptions...)
}

// ConnectionOptions are the options every client of the process starts with: the seed brokers
// and the connection security (Security). ClientOptions starts with them; a client that wants
// nothing else (a readiness probe, `hookstream topics`) takes them alone.
func (b Base) ConnectionOptions() []kgo.Opt {
	return append([]kgo.Opt{kgo.SeedBrokers(b.Brokers...)}, b.Security...)
}

// metadataMinAge is the least time between two metadata refreshes of a client (see
// ClientOptions).
const metadataMinAge = 100 * time.Millisecond
