package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookstream/hookstream/internal/records"
)

// newProducer returns the i-th (0 or 1) of the two transactional producers of one session,
// which take the Kafka transactions in turn (startCommit). Their transactional ids are the same
// for every cdc process of a slot, so a new active reader fences any zombie one.
func (c *CDC) newProducer(i int) (*kgo.Client, error) {
	cl, err := kgo.NewClient(c.cfg.ClientOptions(c.log,
		kgo.TransactionalID(c.transactionalID(i)),
		kgo.TransactionTimeout(c.cfg.TransactionTimeout),
		kgo.RecordPartitioner(partitioner{deliveries: c.names.Deliveries}),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.MaxBufferedRecords(20000), // bounds memory while a huge PostgreSQL transaction streams
		// The records of one read of the replication connection go in one produce request
		// (reads are spaced by the read interval while WAL flows), where the sender reads them
		// uncommitted; the transaction commits on its own, slower cadence (design.md section 5).
		kgo.ProducerLinger(c.cfg.writeLinger()),
	)...)
	if err != nil {
		return nil, fmt.Errorf("cdc: kafka producer: %w", err)
	}
	return cl, nil
}

// transactionalID is the id of the session's i-th producer: <prefix>.cdc.<slot>, the id of
// the single producer before there were two (so a new cdc fences an older one), and
// <prefix>.cdc.<slot>.2.
func (c *CDC) transactionalID(i int) string {
	id := c.cfg.Prefix + ".cdc." + c.cfg.Slot
	if i > 0 {
		id += "." + strconv.Itoa(i+1)
	}
	return id
}

// partitioner places cdc's records: events, endpoint records, checkpoints and dead letters
// where cdc chose (Record.Partition); deliveries by the hash of their key, the endpoint id, as
// every other producer of the deliveries topic does (franz-go's default for keyed records), so
// all of one endpoint's work stays in one partition.
type partitioner struct{ deliveries string }

func (p partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if topic == p.deliveries {
		return kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	}
	return kgo.ManualPartitioner().ForTopic(topic)
}

// claimProducer commits a small session marker to the checkpoint topic. Its first produce makes
// the client register the transactional id, which aborts whatever a previous holder left open,
// and its offset tells readCheckpoint where the committed log ends.
func (c *CDC) claimProducer(ctx context.Context, cl *kgo.Client) (int64, error) {
	if err := cl.BeginTransaction(); err != nil {
		return 0, err
	}
	marker, _ := json.Marshal(map[string]any{"v": 1, "session_start": time.Now().UTC()})
	r := &kgo.Record{Topic: c.names.Checkpoints, Key: []byte(c.cfg.Slot + "/session"), Value: marker, Partition: 0}
	res := cl.ProduceSync(ctx, r)
	if err := res.FirstErr(); err != nil {
		_ = cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
		return 0, fmt.Errorf("cdc: claim transactional id: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return 0, fmt.Errorf("cdc: claim transactional id: %w", err)
	}
	return res[0].Record.Offset, nil
}

// readCheckpoint reads the checkpoint topic up to the session marker at markerOffset and returns
// the slot's newest committed checkpoint, or nil when it has none.
func (c *CDC) readCheckpoint(ctx context.Context, markerOffset int64) (*records.Checkpoint, error) {
	var cp *records.Checkpoint
	err := c.consumeUntil(ctx, c.names.Checkpoints, markerOffset, func(r *kgo.Record) error {
		if string(r.Key) != c.cfg.Slot {
			return nil
		}
		var v records.Checkpoint
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("checkpoint at offset %d: %w", r.Offset, err)
		}
		if v.V != records.CheckpointVersion {
			return fmt.Errorf("checkpoint at offset %d has version %d, this cdc reads %d", r.Offset, v.V, records.CheckpointVersion)
		}
		cp = &v
		return nil
	})
	return cp, err
}

// loadEndpoints rebuilds the endpoint table from the endpoints topic up to the offset recorded in
// the checkpoint: the table as of the checkpoint's LSN.
func (c *CDC) loadEndpoints(ctx context.Context, cp *records.Checkpoint, table *endpointTable) error {
	if cp == nil || cp.EndpointsOffset == 0 {
		return nil
	}
	return c.consumeUntil(ctx, c.names.Endpoints, cp.EndpointsOffset-1, func(r *kgo.Record) error {
		id := string(r.Key)
		if r.Value == nil {
			table.unindex(id)
			return nil
		}
		var e records.Endpoint
		if err := json.Unmarshal(r.Value, &e); err != nil {
			return fmt.Errorf("endpoint record at offset %d: %w", r.Offset, err)
		}
		e.ID = id // the key, as the table always held it
		table.put(&e)
		return nil
	})
}

// consumeUntil reads partition 0 of topic from the start, committed records only, and calls fn
// for each until it has seen the record at offset last. Compaction may have removed that exact
// record (a tombstone's cleanup); reaching the high watermark ends the read too.
func (c *CDC) consumeUntil(ctx context.Context, topic string, last int64, fn func(*kgo.Record) error) error {
	cl, err := kgo.NewClient(c.cfg.ClientOptions(c.log,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)...)
	if err != nil {
		return fmt.Errorf("cdc: read %s: %w", topic, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("cdc: read %s: end offsets: %w", topic, err)
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return fmt.Errorf("cdc: read %s: end offset: %v", topic, end.Err)
	}
	if end.Offset == 0 {
		return nil
	}
	empty := 0
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		var done bool
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("cdc: read %s: %w", topic, ferr)
		}
		if fs.NumRecords() == 0 {
			// Three quiet polls in a row: the log ends before `last` (compacted away).
			if empty++; empty == 3 {
				c.log.Warn("log ended before the expected offset", "topic", topic, "offset", last)
				return nil
			}
			continue
		}
		empty = 0
		var cbErr error
		fs.EachRecord(func(r *kgo.Record) {
			if cbErr != nil || done {
				return
			}
			if cbErr = fn(r); cbErr != nil {
				return
			}
			if r.Offset >= last || r.Offset+1 >= end.Offset {
				done = true
			}
		})
		if cbErr != nil {
			return fmt.Errorf("cdc: read %s: %w", topic, cbErr)
		}
		if done {
			return nil
		}
	}
}
