package records

// A reflection-free JSON codec for Delivery and Attempt.
//
// The sender decodes one Delivery and encodes one Attempt per delivery attempt; with
// encoding/json those two calls cost ~13 µs and ~2-7 µs, most of the sender's per-record CPU.
// The functions here do the same work without reflection and with exactly encoding/json's
// results, so callers may use either interchangeably:
//
//   - UnmarshalDelivery and UnmarshalAttempt run a fast path that understands only a strict,
//     common subset of JSON, the one json.Marshal of these types produces (see scanner).
//     Whenever the input leaves that subset, or a value in it fails to decode, the fast path
//     declines and the input goes to json.Unmarshal, whose value and error are returned as
//     they are. The fast path therefore only has to be right about what it accepts, and it
//     accepts only what it decodes exactly as encoding/json does, mostly by calling the same
//     code (time.Time.UnmarshalJSON, base64.StdEncoding.Decode, json.Unmarshal of a string
//     with escapes); codec_test.go and its fuzz targets check both paths against
//     encoding/json. For an Attempt, encoding/json runs Attempt.UnmarshalJSON, whose one rule
//     beyond reading the fields (a record without latency_us) the fast path applies too.
//   - Attempt.AppendJSON and Delivery.AppendJSON write byte for byte what json.Marshal
//     writes, including its string escaping (HTML characters, U+2028/U+2029, invalid UTF-8).

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// UnmarshalDelivery decodes a deliveries/retry record value exactly as json.Unmarshal(data, &d)
// would: same value, same error.
func UnmarshalDelivery(data []byte) (Delivery, error) {
	return unmarshal(data, decodeDeliveryFast)
}

// UnmarshalAttempt decodes an attempts record value exactly as json.Unmarshal(data, &a) would:
// same value, same error.
func UnmarshalAttempt(data []byte) (Attempt, error) {
	return unmarshal(data, decodeAttemptFast)
}

// unmarshal decodes data with its fast path, or with json.Unmarshal where that declines.
func unmarshal[T any](data []byte, fast func([]byte) (T, bool)) (T, error) {
	if v, ok := fast(data); ok {
		return v, nil
	}
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}

// decodeDeliveryFast is UnmarshalDelivery's fast path; ok is false when it declines.
func decodeDeliveryFast(data []byte) (d Delivery, ok bool) {
	s := scanner{data: data}
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "v":
			return s.int(&d.V)
		case "delivery_id":
			return s.string(&d.DeliveryID)
		case "event_id":
			return s.string(&d.EventID)
		case "endpoint_id":
			return s.string(&d.EndpointID)
		case "partner_id":
			return s.string(&d.PartnerID)
		case "event_type":
			return s.string(&d.EventType)
		case "attempt_no":
			return s.int(&d.AttemptNo)
		case "trigger":
			return s.string(&d.Trigger)
		case "body":
			return s.bytes(&d.Body)
		case "event_lsn":
			return s.lsn(&d.EventLSN)
		case "created_at":
			return s.time(&d.CreatedAt)
		case "commit_time":
			return s.time(&d.CommitTime)
		case "due_at":
			return s.time(&d.DueAt)
		case "deferrals":
			return s.int(&d.Deferrals)
		case "endpoint_version":
			return s.int64(&d.EndpointVersion)
		}
		return false
	})
	return d, ok
}

// decodeAttemptFast is UnmarshalAttempt's fast path; ok is false when it declines. Like
// Attempt.UnmarshalJSON, it reads a record without latency_us (older than the field) with
// LatencyUS = LatencyMS*1000; the subset has no null, so a key read is a value read.
func decodeAttemptFast(data []byte) (a Attempt, ok bool) {
	s := scanner{data: data}
	hasMicros := false
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "v":
			return s.int(&a.V)
		case "delivery_id":
			return s.string(&a.DeliveryID)
		case "event_id":
			return s.string(&a.EventID)
		case "endpoint_id":
			return s.string(&a.EndpointID)
		case "partner_id":
			return s.string(&a.PartnerID)
		case "event_type":
			return s.string(&a.EventType)
		case "attempt_no":
			return s.int(&a.AttemptNo)
		case "trigger":
			return s.string(&a.Trigger)
		case "started_at":
			return s.time(&a.StartedAt)
		case "status":
			return s.int(&a.Status)
		case "latency_ms":
			return s.int64(&a.LatencyMS)
		case "latency_us":
			hasMicros = true
			return s.int64(&a.LatencyUS)
		case "outcome":
			return s.string(&a.Outcome)
		case "error_category":
			return s.string(&a.ErrorCategory)
		case "response_excerpt":
			return s.string(&a.ResponseExcerpt)
		case "next_attempt_at":
			if a.NextAttemptAt == nil {
				a.NextAttemptAt = new(time.Time)
			}
			return s.time(a.NextAttemptAt)
		case "circuit":
			return s.string(&a.Circuit)
		case "circuit_probe_at":
			if a.CircuitProbeAt == nil {
				a.CircuitProbeAt = new(time.Time)
			}
			return s.time(a.CircuitProbeAt)
		case "circuit_at":
			if a.CircuitAt == nil {
				a.CircuitAt = new(time.Time)
			}
			return s.time(a.CircuitAt)
		}
		return false
	})
	if ok && !hasMicros {
		a.LatencyUS = microsOfMillis(a.LatencyMS)
	}
	return a, ok
}

// scanner reads one JSON object of the fast-path subset from data. Every method reports
// false when the input is outside the subset (or a value in it fails to decode); the caller
// then declines, so none of them needs to say why. The subset:
//
//   - optional JSON whitespace around every token, and nothing else after the object;
//   - keys that are exactly a field's name: encoding/json also matches other cases and skips
//     unknown keys, which the fast path leaves to it; a repeated key overwrites, as there;
//   - strings without control characters; string fields take any such string (see string),
//     the other fields only plain ones (see literal), which is what json.Marshal writes for them;
//   - integers -?(0|[1-9][0-9]*) that fit the field: no fraction, exponent or overflow;
//   - no null, true, false, arrays or nested objects.
type scanner struct {
	data []byte
	i    int
}

// object reads the object, calling field after each key and its colon to read the value.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if !s.consume('}') {
		for {
			key, ok := s.str()
			if !ok || !s.consume(':') || !field(key) {
				return false
			}
			if s.consume(',') {
				continue
			}
			if !s.consume('}') {
				return false
			}
			break
		}
	}
	s.skipSpace()
	return s.i == len(s.data)
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then the byte c, if it is next.
func (s *scanner) consume(c byte) bool {
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// literal reads a string and returns it with its quotes, the form UnmarshalJSON methods take.
// plain reports that it is made only of printable ASCII without '"' or '\\', so that its value
// is the bytes between the quotes. A literal that is not plain may still be invalid JSON (a
// bad escape): users of it must then get its value from json.Unmarshal, and decline if that fails.
func (s *scanner) literal() (lit []byte, plain, ok bool) {
	s.skipSpace()
	data := s.data
	if s.i >= len(data) || data[s.i] != '"' {
		return nil, false, false
	}
	plain = true
	for j := s.i + 1; ; {
		for j < len(data) && plainByte[data[j]] {
			j++
		}
		switch {
		case j >= len(data) || data[j] < 0x20:
			return nil, false, false
		case data[j] == '"':
			lit = data[s.i : j+1]
			s.i = j + 1
			return lit, plain, true
		case data[j] == '\\':
			plain = false
			j += 2 // past the escaped byte, which may be '"'
		default: // a byte above 0x7E
			plain = false
			j++
		}
	}
}

// plainByte tells the bytes a plain string is made of: printable ASCII but '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a plain string (see literal) and returns its value, the bytes between the quotes.
func (s *scanner) str() ([]byte, bool) {
	lit, plain, ok := s.literal()
	if !ok || !plain {
		return nil, false
	}
	return lit[1 : len(lit)-1], true
}

// string reads a string. A plain one is copied; any other (escapes, UTF-8, invalid UTF-8) is
// unquoted by json.Unmarshal of the literal alone: encoding/json unquotes a string the same way
// wherever it is, so this is exact, and still far cheaper than falling back for the whole
// record (an attempt's response excerpt usually has quotes or HTML characters to escape).
func (s *scanner) string(p *string) bool {
	lit, plain, ok := s.literal()
	switch {
	case !ok:
		return false
	case plain:
		*p = string(lit[1 : len(lit)-1])
		return true
	default:
		var v string // not p, which would make the whole record escape to the heap
		if json.Unmarshal(lit, &v) != nil {
			return false
		}
		*p = v
		return true
	}
}

// integer reads an integer in [-max-1, max].
func (s *scanner) integer(max int64) (int64, bool) {
	s.skipSpace()
	neg := s.i < len(s.data) && s.data[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	var n uint64
	for s.i < len(s.data) && '0' <= s.data[s.i] && s.data[s.i] <= '9' {
		if s.i-start == 19 { // 19 digits always fit a uint64; more may not fit an int64
			return 0, false
		}
		n = n*10 + uint64(s.data[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || (digits > 1 && s.data[start] == '0') {
		return 0, false
	}
	if neg {
		if n > uint64(max)+1 {
			return 0, false
		}
		return -int64(n), true // with n = max+1 this wraps to -max-1, as wanted
	}
	if n > uint64(max) {
		return 0, false
	}
	return int64(n), true
}

func (s *scanner) int(p *int) bool {
	n, ok := s.integer(math.MaxInt)
	if ok {
		*p = int(n)
	}
	return ok
}

func (s *scanner) int64(p *int64) bool {
	n, ok := s.integer(math.MaxInt64)
	if ok {
		*p = n
	}
	return ok
}

// time reads a plain string with time.Time's own UnmarshalJSON, given the literal, as
// encoding/json does.
func (s *scanner) time(p *time.Time) bool {
	lit, plain, ok := s.literal()
	return ok && plain && p.UnmarshalJSON(lit) == nil
}

// bytes decodes base64 exactly as encoding/json does for a []byte field ("" gives an empty,
// non-nil slice); invalid base64 declines, so that the error is encoding/json's.
func (s *scanner) bytes(p *[]byte) bool {
	v, ok := s.str()
	if !ok {
		return false
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(v)))
	n, err := base64.StdEncoding.Decode(b, v)
	if err != nil {
		return false
	}
	*p = b[:n]
	return true
}

// lsn reads an LSN. (*LSN).UnmarshalJSON unquotes the literal with json.Unmarshal and parses
// it with fmt.Sscanf("%X/%X"), which costs more than the rest of a record and accepts odd forms
// ("1/2junk", over-long halves). The fast path accepts only 1-8 hex digits, '/', 1-8 hex digits,
// for which that parse is exactly the value below; anything else declines.
func (s *scanner) lsn(p *LSN) bool {
	v, ok := s.str()
	if !ok {
		return false
	}
	hi, rest, ok := hex32(v)
	if !ok || len(rest) == 0 || rest[0] != '/' {
		return false
	}
	lo, rest, ok := hex32(rest[1:])
	if !ok || len(rest) != 0 {
		return false
	}
	*p = LSN(hi<<32 | lo)
	return true
}

// hex32 reads 1-8 hex digits (either case) from the front of b.
func hex32(b []byte) (n uint64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && i <= 8; i++ {
		c := b[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return n, b[i:], i > 0
		}
		if i == 8 {
			return 0, nil, false
		}
		n = n<<4 | uint64(c)
	}
	return n, b[i:], i > 0
}

// AppendJSON appends the JSON of a, byte for byte what json.Marshal(a) produces.
//
// The one difference: json.Marshal fails on a time that RFC 3339 cannot express (a year
// outside [0,9999] or a zone offset of 24 hours or more), and AppendJSON, which cannot fail,
// writes such a time as time.Time.AppendFormat with time.RFC3339Nano gives it, which
// time.Time.UnmarshalJSON will then refuse. The sender's times are clock readings, far from
// those limits; a caller that cannot rule such times out should use json.Marshal.
func (a Attempt) AppendJSON(dst []byte) []byte {
	// One allocation at most for the usual record (no escaping); keys, numbers and times take
	// under 450 bytes (with the circuit's times, 20-digit latencies included).
	dst = slices.Grow(dst, 450+len(a.DeliveryID)+len(a.EventID)+len(a.EndpointID)+len(a.PartnerID)+
		len(a.EventType)+len(a.Trigger)+len(a.Outcome)+len(a.ErrorCategory)+len(a.ResponseExcerpt))
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, int64(a.V), 10)
	dst = append(dst, `,"delivery_id":`...)
	dst = appendString(dst, a.DeliveryID)
	dst = append(dst, `,"event_id":`...)
	dst = appendString(dst, a.EventID)
	dst = append(dst, `,"endpoint_id":`...)
	dst = appendString(dst, a.EndpointID)
	dst = append(dst, `,"partner_id":`...)
	dst = appendString(dst, a.PartnerID)
	dst = append(dst, `,"event_type":`...)
	dst = appendString(dst, a.EventType)
	dst = append(dst, `,"attempt_no":`...)
	dst = strconv.AppendInt(dst, int64(a.AttemptNo), 10)
	dst = append(dst, `,"trigger":`...)
	dst = appendString(dst, a.Trigger)
	dst = append(dst, `,"started_at":`...)
	dst = appendTime(dst, a.StartedAt)
	if a.Status != 0 {
		dst = append(dst, `,"status":`...)
		dst = strconv.AppendInt(dst, int64(a.Status), 10)
	}
	dst = append(dst, `,"latency_ms":`...)
	dst = strconv.AppendInt(dst, a.LatencyMS, 10)
	dst = append(dst, `,"latency_us":`...)
	dst = strconv.AppendInt(dst, a.LatencyUS, 10)
	dst = append(dst, `,"outcome":`...)
	dst = appendString(dst, a.Outcome)
	if a.ErrorCategory != "" {
		dst = append(dst, `,"error_category":`...)
		dst = appendString(dst, a.ErrorCategory)
	}
	if a.ResponseExcerpt != "" {
		dst = append(dst, `,"response_excerpt":`...)
		dst = appendString(dst, a.ResponseExcerpt)
	}
	if a.NextAttemptAt != nil {
		dst = append(dst, `,"next_attempt_at":`...)
		dst = appendTime(dst, *a.NextAttemptAt)
	}
	if a.Circuit != "" {
		dst = append(dst, `,"circuit":`...)
		dst = appendString(dst, a.Circuit)
	}
	if a.CircuitProbeAt != nil {
		dst = append(dst, `,"circuit_probe_at":`...)
		dst = appendTime(dst, *a.CircuitProbeAt)
	}
	if a.CircuitAt != nil {
		dst = append(dst, `,"circuit_at":`...)
		dst = appendTime(dst, *a.CircuitAt)
	}
	if o := a.Order; o != nil {
		dst = append(dst, `,"order":{"held":`...)
		dst = strconv.AppendInt(dst, int64(o.Held), 10)
		if o.HeadSince != nil {
			dst = append(dst, `,"head_since":`...)
			dst = appendTime(dst, *o.HeadSince)
		}
		dst = append(dst, `,"at":`...)
		dst = appendTime(dst, o.At)
		dst = append(dst, '}')
	}
	if a.OrderBroken {
		dst = append(dst, `,"order_broken":true`...)
	}
	return append(dst, '}')
}

// AppendJSON appends the JSON of d, byte for byte what json.Marshal(d) produces, with the
// same one difference as Attempt.AppendJSON for times json.Marshal refuses.
func (d Delivery) AppendJSON(dst []byte) []byte {
	dst = slices.Grow(dst, 400+len(d.DeliveryID)+len(d.EventID)+len(d.EndpointID)+len(d.PartnerID)+
		len(d.EventType)+len(d.Trigger)+base64.StdEncoding.EncodedLen(len(d.Body)))
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, int64(d.V), 10)
	dst = append(dst, `,"delivery_id":`...)
	dst = appendString(dst, d.DeliveryID)
	dst = append(dst, `,"event_id":`...)
	dst = appendString(dst, d.EventID)
	dst = append(dst, `,"endpoint_id":`...)
	dst = appendString(dst, d.EndpointID)
	dst = append(dst, `,"partner_id":`...)
	dst = appendString(dst, d.PartnerID)
	dst = append(dst, `,"event_type":`...)
	dst = appendString(dst, d.EventType)
	dst = append(dst, `,"attempt_no":`...)
	dst = strconv.AppendInt(dst, int64(d.AttemptNo), 10)
	dst = append(dst, `,"trigger":`...)
	dst = appendString(dst, d.Trigger)
	dst = append(dst, `,"body":`...)
	if d.Body == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, d.Body)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"event_lsn":`...)
	dst = appendLSN(dst, d.EventLSN)
	dst = append(dst, `,"created_at":`...)
	dst = appendTime(dst, d.CreatedAt)
	if !d.CommitTime.IsZero() {
		dst = append(dst, `,"commit_time":`...)
		dst = appendTime(dst, d.CommitTime)
	}
	dst = append(dst, `,"due_at":`...)
	dst = appendTime(dst, d.DueAt)
	if d.Deferrals != 0 {
		dst = append(dst, `,"deferrals":`...)
		dst = strconv.AppendInt(dst, int64(d.Deferrals), 10)
	}
	if d.EndpointVersion != 0 {
		dst = append(dst, `,"endpoint_version":`...)
		dst = strconv.AppendInt(dst, d.EndpointVersion, 10)
	}
	return append(dst, '}')
}

// appendTime writes t as time.Time.MarshalJSON does: that method quotes
// t.AppendFormat(time.RFC3339Nano) (both call the same internal formatter), and
// encoding/json copies its output unchanged, there being nothing in it to escape.
func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendLSN writes l as LSN.MarshalJSON does: LSN.String() ("%X/%X") quoted; it has no
// characters to escape.
func appendLSN(dst []byte, l LSN) []byte {
	dst = append(dst, '"')
	dst = appendUpperHex(dst, uint64(l>>32))
	dst = append(dst, '/')
	dst = appendUpperHex(dst, uint64(uint32(l)))
	return append(dst, '"')
}

func appendUpperHex(dst []byte, n uint64) []byte {
	start := len(dst)
	dst = strconv.AppendUint(dst, n, 16)
	for i := start; i < len(dst); i++ {
		if 'a' <= dst[i] && dst[i] <= 'f' {
			dst[i] -= 'a' - 'A'
		}
	}
	return dst
}

// appendString writes s as a JSON string exactly as json.Marshal does (it follows
// encoding/json's appendString with escapeHTML set): '"' and '\\' backslash-escaped; \b, \f, \n,
// \r, \t as such; other control characters and '<', '>', '&' as \u00XX; U+2028 and U+2029 as
// \u2028 and \u2029; each byte of invalid UTF-8 as \ufffd; everything else, DEL included, as is.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && htmlSafe[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// htmlSafe tells the bytes json.Marshal writes as they are: ASCII but control characters,
// '"', '\\', '<', '>' and '&' (DEL is written as it is).
var htmlSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
