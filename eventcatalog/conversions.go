package eventcatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/hookstream/hookstream/outbox"
)

// Schema versions move per type, and an endpoint is pinned to one number (R14). The number is a
// catalog version: a type's new version takes a number above every number any type used
// before, so the set of shapes a pin stands for never changes once published. An endpoint
// pinned to N receives each event in its type's newest version at or below N (PinnedVersion);
// a type with no version at or below N, added after the pin, is sent in its first version.
// Conversions step between adjacent versions of a type, in both directions, and change only
// the data they name: every other property, added ones included, passes as it is.

// step rewrites the data of one version of a type into the adjacent one.
type step func(data map[string]json.RawMessage) error

// steps are the conversions between adjacent versions, by type and [from, to].
var steps = map[string]map[[2]int]step{
	"usage.finalized": {
		{2, 1}: func(d map[string]json.RawMessage) error {
			return rewriteCost(d, "amount_micros", "value", microsToDecimal)
		},
		{1, 2}: func(d map[string]json.RawMessage) error {
			return rewriteCost(d, "value", "amount_micros", decimalToMicros)
		},
	},
}

// PinVersions are the numbers an endpoint may be pinned to: 1 through the newest version of
// any type, ascending.
func PinVersions() []int {
	newest := 1
	for _, et := range catalog {
		newest = max(newest, et.SchemaVersion)
	}
	out := make([]int, newest)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// PinnedVersion is the version of typ an endpoint pinned to pin receives: the type's newest
// version at or below pin, or its first when it has none there. A type the catalog lacks is
// sent as it is, in the version it has: pin itself.
func PinnedVersion(typ string, pin int) int {
	versions, ok := versionsOf(typ)
	if !ok {
		return pin
	}
	out := versions[0].SchemaVersion
	for _, v := range versions {
		if v.SchemaVersion <= pin {
			out = v.SchemaVersion
		}
	}
	return out
}

// ConvertData returns data, an event of typ in schema version from, in version to. It is a
// pure function of its arguments: the same input gives the same bytes. The same version
// returns data itself; a conversion that does not exist, or data it cannot carry into the
// other version, is an error and nothing is changed silently.
func ConvertData(typ string, from, to int, data []byte) ([]byte, error) {
	if from == to {
		return data, nil
	}
	byStep := steps[typ]
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, fmt.Errorf("%s v%d data is not a JSON object", typ, from)
	}
	dir := 1
	if to < from {
		dir = -1
	}
	for v := from; v != to; {
		next := nextVersion(typ, v, dir)
		conv, ok := byStep[[2]int{v, next}]
		if next == 0 || !ok {
			return nil, fmt.Errorf("no conversion of %s from schema version %d to %d", typ, from, to)
		}
		if err := conv(doc); err != nil {
			return nil, fmt.Errorf("%s v%d to v%d: %w", typ, v, next, err)
		}
		v = next
	}
	return marshal(doc)
}

// nextVersion is the version of typ after v in direction dir (+1 up, -1 down), or 0.
func nextVersion(typ string, v, dir int) int {
	versions, ok := versionsOf(typ)
	if !ok {
		return 0
	}
	j := slices.IndexFunc(versions, func(ver Version) bool { return ver.SchemaVersion == v })
	if j < 0 || j+dir < 0 || j+dir >= len(versions) {
		return 0
	}
	return versions[j+dir].SchemaVersion
}

// versionsOf returns the published versions of typ, a partner's type or an operator's.
func versionsOf(typ string) ([]Version, bool) {
	for _, c := range [][]EventType{catalog, operatorCatalog} {
		if i := slices.IndexFunc(c, func(et EventType) bool { return et.Type == typ }); i >= 0 {
			return c[i].Versions, true
		}
	}
	return nil, false
}

// ConvertEnvelope returns body, the envelope of an event of typ in schema version from, as an
// endpoint pinned to pin receives it (PinnedVersion): body itself, byte for byte, when that is
// from, so what cdc serialised is what is signed and sent; otherwise the envelope with its
// data converted and its schema_version set, serialised as cdc serialises an envelope.
func ConvertEnvelope(body []byte, typ string, from, pin int) ([]byte, error) {
	if from == pin {
		return body, nil
	}
	to := PinnedVersion(typ, pin)
	if to == from {
		return body, nil
	}
	var env outbox.Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("the event is not an envelope: %w", err)
	}
	if env.Type != typ || env.SchemaVersion != from {
		return nil, fmt.Errorf("the envelope is %s v%d, not %s v%d", env.Type, env.SchemaVersion, typ, from)
	}
	data, err := ConvertData(typ, from, to, env.Data)
	if err != nil {
		return nil, err
	}
	env.Data, env.SchemaVersion = data, to
	return marshal(env)
}

// marshal writes JSON as cdc writes an envelope: no HTML escaping, so a partner's "<" stays
// "<", and no trailing newline. Object keys of a map come out sorted, so the bytes are stable.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// rewriteCost replaces data.cost's member from by member to, its value rewritten by conv;
// the currency and any other member of cost pass as they are.
func rewriteCost(d map[string]json.RawMessage, from, to string, conv func(json.RawMessage) (json.RawMessage, error)) error {
	var cost map[string]json.RawMessage
	if err := json.Unmarshal(d["cost"], &cost); err != nil || cost == nil {
		return errors.New("cost is not an object")
	}
	v, ok := cost[from]
	if !ok {
		return fmt.Errorf("cost has no %s", from)
	}
	out, err := conv(v)
	if err != nil {
		return fmt.Errorf("cost.%s: %w", from, err)
	}
	delete(cost, from)
	cost[to] = out
	b, err := marshal(cost)
	if err != nil {
		return err
	}
	d["cost"] = b
	return nil
}

var (
	microsPattern  = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	decimalPattern = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,6})?$`)
	maxMicros      = new(big.Int).SetUint64(1<<63 - 1)
)

// microsToDecimal writes an integer count of millionths as the decimal string of version 1,
// with its 6 decimals: 3418200 is "3.418200", 5 is "0.000005". Exact at any size.
func microsToDecimal(v json.RawMessage) (json.RawMessage, error) {
	digits := string(v)
	if !microsPattern.MatchString(digits) {
		return nil, fmt.Errorf("%s is not a non-negative integer", quote(digits))
	}
	if len(digits) < 7 {
		digits = strings.Repeat("0", 7-len(digits)) + digits
	}
	return json.Marshal(digits[:len(digits)-6] + "." + digits[len(digits)-6:])
}

// decimalToMicros reads a decimal string of version 1 as an integer count of millionths:
// "3.4182" is 3418200. A negative amount or one beyond a signed 64-bit count has no form in
// version 2 and is refused, never clamped or rounded.
func decimalToMicros(v json.RawMessage) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil || !decimalPattern.MatchString(s) {
		return nil, fmt.Errorf("%s is not a decimal string", quote(string(v)))
	}
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := new(big.Int).SetString(whole+frac+strings.Repeat("0", 6-len(frac)), 10)
	switch {
	case n.Sign() < 0:
		return nil, fmt.Errorf("%s is negative; version 2 holds no negative cost", s)
	case n.Cmp(maxMicros) > 0:
		return nil, fmt.Errorf("%s is beyond a 64-bit count of millionths", quote(s))
	}
	return json.RawMessage(n.String()), nil
}
