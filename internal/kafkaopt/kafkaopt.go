// Package kafkaopt holds Kafka client settings of the components, with the measurements behind them.
package kafkaopt

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The recorder only writes history, which may trail the request by a tenth of a second: its
// consumer fetches in batches, the broker answering once HistoryFetchMinBytes are ready or
// HistoryFetchMaxWait has passed, instead of as soon as one record is. Under a burst that is a
// few fetches a second instead of hundreds, and bigger PostgreSQL transactions. An idle recorder
// makes one empty fetch per wait.
//
// Fanout and the sender, on the latency path, fetch with the client's defaults: a batched
// fetch there (16-32 KiB or 10-20 ms) added 30-80 ms at p99 to a steady 1,000 events/s and
// gained nothing measurable in a burst (make bench, docs/benchmarks.md).
const (
	HistoryFetchMinBytes = 64 << 10
	HistoryFetchMaxWait  = 100 * time.Millisecond
)

// HistoryFetch returns the fetch options of the recorder's consumer.
func HistoryFetch() []kgo.Opt {
	return []kgo.Opt{kgo.FetchMinBytes(HistoryFetchMinBytes), kgo.FetchMaxWait(HistoryFetchMaxWait)}
}
