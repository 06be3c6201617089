package replay

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Attempt numbers of replays (R24, design.md section 8).
//
// A replay is a new attempt of the same (event, endpoint) pair: same event id, same delivery
// id, the next attempt number, trigger replay. The recorder keys attempts by (delivery_id,
// attempt_no), so a replay must never take a number an automatic attempt will also take, or one
// of the two attempts would vanish from the history. Automatic attempts are numbered 1 to
// AutomaticAttempts (the retry schedule's length) and each follows the one before it.
//
// The number is chosen under the delivery's replay_reservation row lock:
//
//   - settled: the delivery's newest recorded attempt is final (succeeded, failed, skipped) and
//     every number reserved before has been recorded. No automatic attempt can follow a final
//     one, so the replay takes the next number: highest recorded + 1.
//   - otherwise an automatic attempt may still be in flight (state pending or retrying, a
//     replay reserved but not yet recorded, or no recorded attempt at all: the initial attempt
//     may still be on its way), so the replay takes a number above every automatic one:
//     max(highest recorded or reserved, AutomaticAttempts) + 1.
//
// A replay numbered at or below AutomaticAttempts that fails is retried by the schedule like any
// attempt (its chain shows as retrying, so the next replay jumps above it); one numbered above
// AutomaticAttempts is not retried (the schedule has no delay after its last attempt). One limit
// remains: an ordered endpoint retries a held head in process with growing numbers, which can
// pass AutomaticAttempts; a replay made during such a hold may share a number with it.
func nextAttempt(state *string, attemptCount, highestRecorded, reserved, automatic int) int {
	recorded := max(attemptCount, highestRecorded)
	known := max(recorded, reserved)
	settled := state != nil && (*state == "succeeded" || *state == "failed" || *state == "skipped") && reserved <= recorded
	if settled {
		return known + 1
	}
	return max(known, automatic) + 1
}

// reserveAttempts assigns each delivery id the attempt number of one replay, inside tx; the
// numbers are durable once tx commits, before anything is produced, so a crash can skip a
// number but never hand one out twice.
func reserveAttempts(ctx context.Context, tx pgx.Tx, ids []string, automatic int) (map[string]int, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// Sorted inserts and locks: concurrent reservations take rows in one order, never deadlock.
	if _, err := tx.Exec(ctx, `INSERT INTO replay_reservation (delivery_id, attempt_no)
		SELECT unnest($1::text[]), 0 ON CONFLICT (delivery_id) DO NOTHING`, ids); err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT r.delivery_id, r.attempt_no, d.state, COALESCE(d.attempt_count, 0),
			COALESCE((SELECT max(a.attempt_no) FROM delivery_attempt a WHERE a.delivery_id = r.delivery_id), 0)
		FROM replay_reservation r LEFT JOIN delivery d ON d.delivery_id = r.delivery_id
		WHERE r.delivery_id = ANY($1) ORDER BY r.delivery_id FOR UPDATE OF r`, ids)
	if err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	var (
		id                       string
		reserved, count, highest int32
		state                    *string
		updateIDs                []string
		updateNos                []int32
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &reserved, &state, &count, &highest}, func() error {
		n := nextAttempt(state, int(count), int(highest), int(reserved), automatic)
		out[id] = n
		updateIDs, updateNos = append(updateIDs, id), append(updateNos, int32(n))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE replay_reservation r SET attempt_no = u.n, reserved_at = now()
		FROM unnest($1::text[], $2::int[]) AS u(id, n) WHERE r.delivery_id = u.id`, updateIDs, updateNos); err != nil {
		return nil, fmt.Errorf("reserve attempts: %w", err)
	}
	return out, nil
}
