package egress

import (
	"errors"
	"fmt"
)

// Rules name the part of the policy that refused a destination. They are stable: the admin API
// returns them to partners and the sender records them.
const (
	RuleURL            = "url"             // not an absolute URL, too long, or has a fragment
	RuleScheme         = "scheme"          // not https (or http where allowed)
	RulePort           = "port"            // port not in Config.AllowedPorts
	RuleUserinfo       = "userinfo"        // credentials embedded in the URL
	RuleHost           = "host"            // missing, malformed, numeric or localhost host name
	RuleMetadata       = "metadata"        // a cloud metadata service name or address
	RuleBlockedAddress = "blocked_address" // an address that is not public and not allowed
	RuleResolve        = "resolve"         // the host name did not resolve
	RuleNetwork        = "network"         // a dial on a network other than TCP
)

// ErrBlockedDestination matches, through errors.Is, every refusal by the policy except a failed
// resolution. The sender records such failures as the blocked_destination category.
var ErrBlockedDestination = errors.New("egress: blocked destination")

// PolicyError says which rule refused a destination and why.
type PolicyError struct {
	Rule   string // one of the Rule constants
	Detail string // a sentence for people: what was refused and why
	Err    error  // the underlying cause, such as the resolver's error; may be nil
}

func (e *PolicyError) Error() string {
	msg := fmt.Sprintf("egress: destination refused (%s): %s", e.Rule, e.Detail)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause so callers can reach, say, a *net.DNSError.
func (e *PolicyError) Unwrap() error { return e.Err }

// Is makes every refusal match ErrBlockedDestination, except a failed resolution: a name that
// does not resolve is a DNS failure to retry, not a forbidden destination.
func (e *PolicyError) Is(target error) bool {
	return target == ErrBlockedDestination && e.Rule != RuleResolve
}

func refuse(rule, format string, args ...any) *PolicyError {
	return &PolicyError{Rule: rule, Detail: fmt.Sprintf(format, args...)}
}
