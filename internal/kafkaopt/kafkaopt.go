// Package kafkaopt holds the Kafka client settings that several components share.
package kafkaopt

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The consumers of the delivery path fetch in batches: the broker answers a fetch once its
// minimum of bytes is ready or its wait has passed. Answering every fetch as soon as one record
// was ready made each consumer fetch hundreds of times a second under a burst, and the wake-ups
// of those small fetches cost broker and clients CPU the committing application needed (make
// bench, one event per transaction, everything on one 2-core machine).
//
// Fanout and the sender are on the latency path: their wait is short, so a record waits at most
// DeliveryFetchMaxWait per hop when traffic is light. The recorder only writes history, which
// may trail the request by a tenth of a second: it waits longer and fetches bigger batches.
// An idle consumer makes one empty fetch per wait.
const (
	DeliveryFetchMinBytes = 16 << 10
	DeliveryFetchMaxWait  = 10 * time.Millisecond
	HistoryFetchMinBytes  = 64 << 10
	HistoryFetchMaxWait   = 100 * time.Millisecond
)

// DeliveryFetch returns the fetch options of fanout's and the sender's consumers.
func DeliveryFetch() []kgo.Opt {
	return []kgo.Opt{kgo.FetchMinBytes(DeliveryFetchMinBytes), kgo.FetchMaxWait(DeliveryFetchMaxWait)}
}

// HistoryFetch returns the fetch options of the recorder's consumer.
func HistoryFetch() []kgo.Opt {
	return []kgo.Opt{kgo.FetchMinBytes(HistoryFetchMinBytes), kgo.FetchMaxWait(HistoryFetchMaxWait)}
}
