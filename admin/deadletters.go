package admin

import (
	"net/http"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
)

// outboxDeadLetterReasons are the reasons cdc refuses an outbox row for (cdc.Reasons; a test
// keeps the two lists equal).
var outboxDeadLetterReasons = []string{"malformed", "too_large", "unknown_type", "schema_version", "invalid_data"}

// outboxDeadLetterView is an outbox row cdc refused to publish, with the reason.
type outboxDeadLetterView struct {
	EventID       string         `json:"event_id"`
	PartnerID     string         `json:"partner_id"`
	Type          string         `json:"type"`
	SchemaVersion int            `json:"schema_version"`
	Subject       outbox.Subject `json:"subject"`
	OccurredAt    timestamp      `json:"occurred_at"`
	Reason        string         `json:"reason"`
	Detail        string         `json:"detail"`
	CommitLSN     string         `json:"commit_lsn"`
	CreatedAt     timestamp      `json:"created_at"`
}

type outboxDeadLetterCursor struct {
	ID int64 `json:"id"`
}

// listOutboxDeadLetters lists the outbox rows cdc refused (unknown type, data its schema
// refuses, no valid envelope, too large), newest first, optionally of one partner or reason.
// Operator only: the rows were written by the platform and never published, so they are the
// platform's to fix; a partner learns nothing from another partner's rows nor needs its own, and
// reconciles from the platform's state APIs as for any missed event (design.md section 1).
func (a *API) listOutboxDeadLetters(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	var after outboxDeadLetterCursor
	limit, e := pageQuery(q, "outbox-dead-letters", &after, func() bool { return after.ID > 0 })
	if e != nil {
		return e
	}
	partner, reason := q.Get("partner_id"), q.Get("reason")
	if len(partner) > 255 || strings.IndexByte(partner, 0) >= 0 {
		return invalidField("partner_id", "partner_id must be a partner id")
	}
	if reason != "" && !slices.Contains(outboxDeadLetterReasons, reason) {
		return invalidField("reason", "reason must be one of %s", strings.Join(outboxDeadLetterReasons, ", "))
	}
	var ids []int64
	scan := func(row pgx.Row) (outboxDeadLetterView, error) {
		var (
			v       outboxDeadLetterView
			id      int64
			version int32
		)
		err := row.Scan(&id, &v.EventID, &v.PartnerID, &v.Type, &version, &v.Subject.Type, &v.Subject.ID,
			&v.OccurredAt, &v.Reason, &v.Detail, &v.CommitLSN, &v.CreatedAt)
		v.SchemaVersion = int(version)
		ids = append(ids, id)
		return v, err
	}
	out, err := queryPage(r.Context(), a.pool, limit, scan, func(outboxDeadLetterView) string {
		return encodeCursor("outbox-dead-letters", outboxDeadLetterCursor{ID: ids[limit-1]})
	}, `SELECT id, event_id, partner_id, type, schema_version, subject_type, subject_id,
		occurred_at, reason, detail, commit_lsn::text, created_at FROM outbox_dead_letter
		WHERE ($1 = '' OR partner_id = $1) AND ($2 = '' OR reason = $2) AND ($3 = 0 OR id < $3)
		ORDER BY id DESC LIMIT $4`, partner, reason, after.ID, limit+1)
	if err != nil {
		return err
	}
	respond(w, http.StatusOK, out)
	return nil
}
