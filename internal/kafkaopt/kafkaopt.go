// Package kafkaopt holds the Kafka client settings that several components share.
package kafkaopt

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The consumers on the delivery path (fanout on events, the sender on deliveries, the recorder
// on attempts) fetch in batches: the broker answers a fetch once FetchMinBytes are ready or
// FetchMaxWait has passed. Answering every fetch as soon as one record is ready made each of
// them fetch hundreds of times a second under a burst, and the wake-ups of those small fetches
// (broker and client) were a tenth of the CPU the whole chain used per delivery (make bench,
// one event per transaction). The wait costs a record at most FetchMaxWait per hop when traffic
// is light, and an idle consumer one empty fetch per FetchMaxWait.
const (
	FetchMinBytes = 32 << 10
	FetchMaxWait  = 20 * time.Millisecond
)

// BatchedFetch returns the options of a consumer on the delivery path.
func BatchedFetch() []kgo.Opt {
	return []kgo.Opt{kgo.FetchMinBytes(FetchMinBytes), kgo.FetchMaxWait(FetchMaxWait)}
}
