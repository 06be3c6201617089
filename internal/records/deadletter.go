package records

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// NewDeadLetter returns the dead letter of original, which source ("cdc", "fanout",
// "recorder", "sender", "retry") could not process for reason, dated now. The caller adds the
// event, partner and LSN it knows.
//
// The original is carried once: as it is when it is JSON in valid UTF-8 (so that the dead
// letter is valid JSON too), else as one JSON string of its bytes, invalid UTF-8 replaced by
// U+FFFD. An empty original is left out.
func NewDeadLetter(source, reason string, original []byte) DeadLetter {
	return DeadLetter{V: DeadLetterVersion, Source: source, Reason: reason, At: time.Now().UTC(), Original: originalJSON(original)}
}

// DeadLetterRecord is the dlq record of dl, keyed by key: the one way every component that
// gives up on something writes it to topic (the dlq topic of its prefix). An original that is
// not valid JSON (one not set by NewDeadLetter) is carried as a JSON string, so the value is
// always valid JSON.
func DeadLetterRecord(topic, key string, dl DeadLetter) *kgo.Record {
	dl.Original = originalJSON(dl.Original)
	b, _ := json.Marshal(dl) // plain fields and a valid JSON original cannot fail
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: b}
}

// originalJSON is original as a dead letter carries it (NewDeadLetter).
func originalJSON(original []byte) json.RawMessage {
	switch {
	case len(original) == 0:
		return nil
	case utf8.Valid(original) && json.Valid(original):
		return original
	}
	return quote(original)
}

// quote is b as a JSON string, invalid UTF-8 replaced by U+FFFD.
func quote(b []byte) json.RawMessage {
	s, _ := json.Marshal(strings.ToValidUTF8(string(b), "\uFFFD")) // a valid string cannot fail
	return s
}

// MaxClippedOriginal is the most of a record ClipOriginal keeps: 64 KiB.
const MaxClippedOriginal = 64 << 10

// ClipOriginal bounds the original of a record a component could not read before it goes into
// a dead letter: a record of at most MaxClippedOriginal bytes is returned as it is, a larger
// one as a JSON string of its first MaxClippedOriginal bytes, even if it was JSON (cut, it no
// longer is).
func ClipOriginal(original []byte) []byte {
	if len(original) <= MaxClippedOriginal {
		return original
	}
	return quote(original[:MaxClippedOriginal])
}
