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
func KafkaLogger(log *slog.Logger) kgo.Logger { return kafkaLogger{log} }

type kafkaLogger struct{ log *slog.Logger }

func (l kafkaLogger) Level() kgo.LogLevel {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelInfo
	}
	return kgo.LogLevelWarn
}

func (l kafkaLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	case kgo.LogLevelInfo:
	default:
		return
	}
	l.log.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}

// ClientOptions returns the options of one franz-go client of the component: its seed
// brokers, franz-go's log passed to log (the component's logger, see KafkaLogger), quick
// recovery from a retriable error (below), then opts, then KafkaOptions, which so win over the
// component's own.
//
// Quick recovery: a produce answered with a retriable error (under KIP-890 also
// CONCURRENT_TRANSACTIONS, when a transactional producer writes right after its previous
// transaction ended), and the offset listing of a consumer's newly assigned partitions, wait for
// a metadata refresh, and franz-go refreshes at most once per MetadataMinAge, 5 s
// by default. In `make bench` on the real broker that held cdc's events or fanout's deliveries
// for 3-5 s at a time ("metadata update triggered", why "produce request had retry batches",
// then nothing for 4 s). So every client refreshes at most every 100 ms and retries after 20 ms
// per failure, at most a second. Periodic refreshes (MetadataMaxAge) keep their default.
func (b Base) ClientOptions(log *slog.Logger, opts ...kgo.Opt) []kgo.Opt {
	out := make([]kgo.Opt, 0, 4+len(opts)+len(b.KafkaOptions))
	out = append(out, kgo.SeedBrokers(b.Brokers...), kgo.WithLogger(KafkaLogger(log)),
		kgo.MetadataMinAge(metadataMinAge), kgo.RetryBackoffFn(retryBackoff))
	out = append(out, opts...)
	return append(out, b.KafkaOptions...)
}

// metadataMinAge is the least time between two metadata refreshes of a client (see
// ClientOptions).
const metadataMinAge = 100 * time.Millisecond

// retryBackoff is how long a client waits before retrying a request that failed fails times
// in a row: 20 ms per failure, at most a second.
func retryBackoff(fails int) time.Duration {
	return min(time.Duration(max(fails, 1))*20*time.Millisecond, time.Second)
}
