package outbox

import (
	"fmt"

	"github.com/hookstream/hookstream/internal/records"
)

// PartitionFor is the partition of the events topic that holds every event of partnerID when the
// topic has partitions partitions: the FNV-1a (32-bit) hash of the partner id's UTF-8 bytes,
// modulo partitions. cdc publishes by it, and the feed and replays read by it, so a reader of
// the event log can find one partner's events in commit order (R32; docs/consuming-the-log.md).
// It is a contract: it changes only with a new events topic. partitions below 1 is an error.
func PartitionFor(partnerID string, partitions int32) (int32, error) {
	if partitions < 1 {
		return 0, fmt.Errorf("outbox: partition of %q: the events topic has %d partitions, want at least 1", partnerID, partitions)
	}
	return records.EventPartition(partnerID, partitions), nil
}
