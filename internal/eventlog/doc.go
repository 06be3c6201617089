// Package eventlog reads the events topic, where cdc publishes each committed event into its
// partner's partition (design.md section 5), for the admin API's cursor feed and event stream and
// for the replay engine's log replays and envelope lookups. A Log reads one partition from an
// offset, committed records only, each read on a direct consumer of its own, so reads never share
// a position; at most Config.MaxReaders run at once, and a reader is kept a little while after a
// read for the read that continues it. Find looks a partner's events up by id.
//
// Event is an events-topic record as these readers see it (FromRecord); BodyAgrees is the check
// made before an envelope is handed to a partner, so a record whose headers and body disagree
// never crosses tenants (R13). A Kafka failure a caller may retry wraps ErrUnavailable; an offset
// the retention removed is ErrOffsetExpired.
package eventlog
