package admin

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// TimestampLayout is how every time of a response is written: RFC 3339 in UTC with exactly
// six fractional digits (microseconds, PostgreSQL's precision, so a time shown can be sent back
// as a query bound without moving), e.g. 2026-01-02T15:04:05.123000Z. One fixed width lets any
// client parse it with one format, whatever the time.
const TimestampLayout = "2006-01-02T15:04:05.000000Z"

// timestamp is a time of a response view. Every view's time field is one (or a pointer to one,
// for null), so the format is decided here only; the embedded time.Time keeps its methods for
// the code that computes with it.
type timestamp struct{ time.Time }

// stamp is t as a response shows it.
func stamp(t time.Time) timestamp { return timestamp{t} }

// stampPtr is t as a nullable field shows it: nil stays null.
func stampPtr(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	return &timestamp{*t}
}

// MarshalJSON writes TimestampLayout.
func (t timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(TimestampLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimestampLayout)
	return append(b, '"'), nil
}

// ScanTimestamptz reads a timestamptz column (pgx's TimestamptzScanner); NULL scans only into a
// *timestamp, which pgx leaves nil.
func (t *timestamp) ScanTimestamptz(v pgtype.Timestamptz) error {
	t.Time = v.Time
	return nil
}

// TimestamptzValue writes it as a query argument (pgx's TimestamptzValuer).
func (t timestamp) TimestamptzValue() (pgtype.Timestamptz, error) {
	return pgtype.Timestamptz{Time: t.Time, Valid: true}, nil
}
