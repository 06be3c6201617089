package sender

// Assignment and commits: partitions assigned, revoked and lost, and the offsets committed up to
// the lowest unfinished record of each.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hookstream/hookstream/internal/periodic"
)

func (s *Sender) partitionOf(id int32) *partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	return s.parts[id]
}

// txnWatchOf returns partition id's transaction watch, the one it had under an earlier
// assignment to this process if any (uncommitted.go). Called with partsMu held.
func (s *Sender) txnWatchOf(id int32) *txnWatch {
	if s.txns == nil {
		s.txns = make(map[int32]*txnWatch)
	}
	t := s.txns[id]
	if t == nil {
		t = &txnWatch{}
		s.txns[id] = t
	}
	return t
}

func (s *Sender) onAssigned(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
	// A pause of an earlier assignment's feeder (feed) must not outlive it: the new owner
	// starts fetching.
	cl.ResumeFetchPartitions(assigned)
	ids := assigned[s.names.Deliveries]
	// Read before fetching starts (it waits for this callback): the first records must see them.
	done := s.finishedRunsOf(ctx, cl, ids)
	if done == nil {
		done = map[int32][]offsetRange{}
	}
	// A partition this sender lost and gets back: what its work finished since the last commit
	// is finished too (its attempt records are in Kafka), once that work ended or lostWait passed.
	deadline := time.Now().Add(lostWait)
	for _, id := range ids {
		if p := s.takeLost(id); p != nil {
			p.waitIdle(deadline)
			done[id] = mergeRanges(done[id], p.finishedRanges())
			p.cancel() // what still runs is sent again (at least once)
		}
	}
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	for _, id := range ids {
		if old := s.parts[id]; old != nil {
			old.stop()
			old.cancel()
		}
		s.parts[id] = newPartition(s.workCtx, s.names.Deliveries, id)
		s.parts[id].done = done[id]
		s.parts[id].txns = s.txnWatchOf(id)
	}
	s.m.partitions.Set(float64(len(s.parts)))
	s.log.Info("partitions assigned", "partitions", ids)
}

// onRevoked stops the revoked partitions, lets their requests in flight finish (up to
// ShutdownGrace), and commits each up to its lowest unfinished record before the rebalance
// goes on: nothing unfinished is committed, so the next owner delivers it (at least once).
func (s *Sender) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	parts := s.detach(revoked[s.names.Deliveries])
	if len(parts) == 0 {
		return
	}
	s.log.Info("partitions revoked", "partitions", revoked[s.names.Deliveries])
	s.retire(parts, time.Now().Add(s.cfg.ShutdownGrace))
	s.commit(ctx, cl, parts)
	for _, p := range parts {
		p.cancel()
	}
}

// onLost stops intake of lost partitions at once, but lets their running work go on: a loss
// is mostly the broker or the group coordinator away (the session cannot be confirmed), and
// a request answered meanwhile, its attempt record produced once the broker is back, need not
// be sent again if the partition comes back to this sender (onAssigned). If another member
// owns it now, both may send a record (at least once), as after any loss. The work is
// abandoned after lostHold; no commit is tried (it would fail).
func (s *Sender) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	parts := s.detach(lost[s.names.Deliveries])
	for _, p := range parts {
		p.stop()
	}
	s.dropQueued()
	s.partsMu.Lock()
	for _, p := range parts {
		if old := s.lost[p.id]; old != nil {
			old.cancel()
		}
		s.lost[p.id] = p
		time.AfterFunc(lostHold, func() {
			if s.takeLostIf(p) {
				p.cancel()
			}
		})
	}
	s.partsMu.Unlock()
	if len(parts) > 0 {
		s.log.Warn("partitions lost", "partitions", lost[s.names.Deliveries])
	}
}

// takeLost removes and returns the lost partition id, if any.
func (s *Sender) takeLost(id int32) *partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	p := s.lost[id]
	delete(s.lost, id)
	return p
}

// takeLostIf removes p from the lost partitions if it is still there, and says so.
func (s *Sender) takeLostIf(p *partition) bool {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	if s.lost[p.id] != p {
		return false
	}
	delete(s.lost, p.id)
	return true
}

// detach removes the given partitions from the assignment and returns them. franz-go calls
// the revoke callback with no partitions at the end of a cooperative session: that detaches
// nothing.
func (s *Sender) detach(ids []int32) []*partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	var out []*partition
	for _, id := range ids {
		if p := s.parts[id]; p != nil {
			out = append(out, p)
			delete(s.parts, id)
		}
	}
	s.m.partitions.Set(float64(len(s.parts)))
	return out
}

// detachAll removes every partition from the assignment and returns them (shutdown).
func (s *Sender) detachAll() []*partition {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	out := make([]*partition, 0, len(s.parts))
	for id, p := range s.parts {
		out = append(out, p)
		delete(s.parts, id)
	}
	s.m.partitions.Set(0)
	return out
}

// retire stops parts, drops their queued work and waits until their running work finishes or
// the deadline passes; then what still runs is cancelled and stays unfinished.
func (s *Sender) retire(parts []*partition, deadline time.Time) {
	for _, p := range parts {
		p.stop()
	}
	s.dropQueued()
	for _, p := range parts {
		if !p.waitIdle(deadline) {
			s.log.Warn("work still running after the grace period is abandoned uncommitted", "partition", p.id)
			p.cancel()
		}
	}
}

// commitLoop commits the marks of the assigned partitions every CommitInterval.
func (s *Sender) commitLoop(ctx context.Context) {
	periodic.Every(ctx, s.cfg.CommitInterval, func(ctx context.Context) {
		s.partsMu.Lock()
		parts := make([]*partition, 0, len(s.parts))
		for _, p := range s.parts {
			parts = append(parts, p)
		}
		s.partsMu.Unlock()
		s.commit(ctx, s.consumer, parts)
		s.measureHolds(s.now())
	})
}

// commit commits each partition up to its mark, the lowest unfinished record, with the runs of
// finished records above the mark in the commit's metadata (finished.go).
func (s *Sender) commit(ctx context.Context, cl *kgo.Client, parts []*partition) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	offsets := map[int32]kgo.EpochOffset{}
	runs := map[int32]string{}
	finishes := map[int32]uint64{}
	byID := map[int32]*partition{}
	for _, p := range parts {
		if eo, r, f, ok := p.commitPoint(); ok {
			offsets[p.id], runs[p.id], finishes[p.id] = eo, r, f
			byID[p.id] = p
		}
	}
	if len(offsets) == 0 {
		return
	}
	ctx = kgo.PreCommitFnContext(ctx, func(req *kmsg.OffsetCommitRequest) error {
		for i := range req.Topics {
			for j := range req.Topics[i].Partitions {
				rp := &req.Topics[i].Partitions[j]
				if r, ok := runs[rp.Partition]; ok && req.Topics[i].Topic == s.names.Deliveries {
					rp.Metadata = kmsg.StringPtr(r)
				}
			}
		}
		return nil
	})
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{s.names.Deliveries: offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				if ctx.Err() == nil {
					s.m.commitErrors.Inc()
					s.log.Warn("offset commit failed", "err", err)
				}
				return
			}
			for _, t := range resp.Topics {
				for _, rp := range t.Partitions {
					if rp.ErrorCode != 0 {
						s.m.commitErrors.Inc()
						s.log.Warn("offset commit refused", "partition", rp.Partition, "code", rp.ErrorCode)
						continue
					}
					if p := byID[rp.Partition]; p != nil {
						p.committedAt(offsets[rp.Partition].Offset, finishes[rp.Partition])
					}
				}
			}
		})
}

// finishedRunsOf reads, for partitions just assigned, the finished runs their previous owner
// committed above its mark (finished.go). On an error the partitions start without: what was
// finished is sent again, as it would be without the runs.
func (s *Sender) finishedRunsOf(ctx context.Context, cl *kgo.Client, ids []int32) map[int32][]offsetRange {
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).FetchOffsetsForTopics(ctx, s.cfg.group(), s.names.Deliveries)
	if err != nil {
		s.log.Warn("committed offsets not read; finished work above them may be sent again", "err", err)
		return nil
	}
	out := map[int32][]offsetRange{}
	for _, id := range ids {
		if o, ok := resp.Lookup(s.names.Deliveries, id); ok && o.Err == nil {
			if r := parseFinished(o.Metadata, o.At); len(r) > 0 {
				out[id] = r
			}
		}
	}
	return out
}
