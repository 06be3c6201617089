package admin

import (
	"regexp"

	"github.com/oklog/ulid/v2"
)

// Identifiers the API makes: a prefix naming the kind, then a ULID, so ids sort by creation.
const (
	endpointIDPrefix = "ep_"
	secretIDPrefix   = "whsk_"
	apiKeyIDPrefix   = "key_"
	replayJobPrefix  = "rpl_"
	requestIDPrefix  = "req_"
)

func newID(prefix string) string { return prefix + ulid.Make().String() }

var (
	ulidIDPattern     = regexp.MustCompile(`^(ep|whsk|key|rpl)_[0-9A-HJKMNP-TV-Z]{26}$`)
	deliveryIDPattern = regexp.MustCompile(`^dlv_[a-z2-7]{26}$`)
)

// validID reports whether s is an id of the kind prefix names. Path values and cursor contents
// are checked with it before they reach a query: a malformed id is simply not found.
func validID(prefix, s string) bool {
	return len(s) == len(prefix)+26 && s[:len(prefix)] == prefix && ulidIDPattern.MatchString(s)
}

func validDeliveryID(s string) bool { return deliveryIDPattern.MatchString(s) }
