// Package filter is the payload filter language of endpoints (design.md section 7): a boolean expression
// over the event envelope that an endpoint's events must satisfy, beside its type
// subscription. The admin API parses a filter at registration and refuses one that does not
// parse with the position of the fault; fanout evaluates it against each event's envelope, the
// bytes the endpoint would receive, and an event it is false for gets no delivery.
//
// Grammar (keywords are lowercase; whitespace separates tokens and is otherwise ignored):
//
//	filter     = or
//	or         = and { "or" and }
//	and        = unary { "and" unary }
//	unary      = "not" unary | primary
//	primary    = "(" or ")"
//	           | "exists" "(" path ")"
//	           | path compare literal
//	           | path [ "not" ] "in" "[" literal { "," literal } "]"
//	compare    = "==" | "!=" | "<" | "<=" | ">" | ">="
//	path       = field { "." name | "[" index "]" | "[" string "]" }
//	field      = "event_id" | "type" | "occurred_at" | "partner_id" | "subject"
//	           | "schema_version" | "correlation_id" | "data"
//	name       = ( letter | "_" ) { letter | digit | "_" }
//	index      = digit { digit }
//	literal    = string | number | "true" | "false" | "null"
//
// Strings and numbers are written as in JSON. "and" binds tighter than "or"; "not" tighter
// than both. Examples:
//
//	data.amount.value >= 100
//	type == "balance.credited" and data.source in ["purchase", "grant"]
//	exists(data.api_key_id) and not (data.status == "revoked" or data.reason == "test")
//	subject.type == "customer" and data.changed[0] == "status"
//
// Meaning, for the value v found at the path (a path into a missing key, past the end of an
// array or through a value that is no object or array finds nothing):
//
//   - exists(p) is true when p finds a value, null included.
//   - p == lit is true when v equals lit: a string only a string, true and false only
//     themselves, null only null, and a number any number or decimal string ("12.50", how
//     money is written, R7) of the same value, compared exactly. Objects and arrays equal no
//     literal. p != lit is not (p == lit), so it is true when p finds nothing.
//   - p < lit (and <=, >, >=) needs a number literal and is true when v is a number or a
//     decimal string that compares so, exactly; anything else (nothing found, text, null) is
//     false. Other literals are refused at parse time.
//   - p in [a, b, …] is p == a or p == b …; p not in […] is its negation.
//
// Limits, refused at parse time: at most MaxLength bytes, MaxDepth nested parentheses and
// nots, MaxList literals in a list, MaxSegments segments in a path.
//
// Cost, bounded at registration so that no endpoint's filter slows fanout for the others:
// Decode reads each number of an envelope (JSON numbers and decimal strings) once, into an
// exact decimal form that compares in time bounded by its digits whatever its exponent, and
// Parse reads the literals once, an in list into a set looked up in constant time. Parse
// refuses a number literal whose exponent, written d.ddd × 10^e, lies outside ±MaxExponent,
// and a filter over MaxCost, where each comparison costs 1 plus the segments of its path; both
// name the position of the fault. ParseStored reads a filter registered under wider limits by
// an earlier release without these two checks: the view and replays use it, so an endpoint
// keeps its filter across an upgrade.
package filter
