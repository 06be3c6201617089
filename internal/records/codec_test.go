package records

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The codec promises encoding/json's results exactly. "Exactly" is checked strictly:
//   - decoded values with reflect.DeepEqual, which tells a nil Body from an empty one and
//     compares time.Time by its wall clock, monotonic reading and location (deeply), not
//     just by instant;
//   - errors by presence and by text (the codec returns encoding/json's own error);
//   - encodings byte for byte.
// Where the fast path is expected to accept or decline, that is checked too, so that a codec
// that always fell back (correct but pointless) fails.

// eventBody is a realistic event envelope, the Body of a delivery.
const eventBody = `{"event_id":"evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2","type":"customer.created","partner_id":"p_a","occurred_at":"2026-03-01T12:00:00Z","subject":{"type":"customer","id":"cus_1"},"schema_version":1,"data":{"n":1,"email":"ada@example.com","name":"Ada Lovelace"}}`

func sampleDelivery() Delivery {
	return Delivery{
		V:          DeliveryVersion,
		DeliveryID: DeliveryID("evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2", "ep_01JDZ8Y2K3M4N5P6Q7R8S9T0V1"),
		EventID:    "evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2",
		EndpointID: "ep_01JDZ8Y2K3M4N5P6Q7R8S9T0V1",
		PartnerID:  "p_a",
		EventType:  "customer.created",
		AttemptNo:  3,
		Trigger:    TriggerRetry,
		Body:       []byte(eventBody),
		EventLSN:   0x16_B374D848,
		CreatedAt:  time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC),
		CommitTime: time.Date(2026, 3, 1, 11, 59, 59, 987654321, time.UTC),
		DueAt:      time.Date(2026, 3, 1, 12, 5, 30, 0, time.UTC),
		Deferrals:  2,
		// The endpoint version of a test or replay record (read-your-writes).
		EndpointVersion: 7,
	}
}

func sampleAttempt() Attempt {
	next := time.Date(2026, 3, 1, 12, 10, 0, 500000000, time.UTC)
	return Attempt{
		V:               AttemptVersion,
		DeliveryID:      DeliveryID("evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2", "ep_01JDZ8Y2K3M4N5P6Q7R8S9T0V1"),
		EventID:         "evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2",
		EndpointID:      "ep_01JDZ8Y2K3M4N5P6Q7R8S9T0V1",
		PartnerID:       "p_a",
		EventType:       "customer.created",
		AttemptNo:       3,
		Trigger:         TriggerRetry,
		StartedAt:       time.Date(2026, 3, 1, 12, 5, 30, 1000, time.UTC),
		Status:          503,
		LatencyMS:       1234,
		LatencyUS:       1234567,
		Outcome:         OutcomeRetrying,
		ErrorCategory:   CategoryHTTPStatus,
		ResponseExcerpt: `{"error":"unavailable","retry_after":30}`,
		NextAttemptAt:   &next,
		Circuit:         CircuitOpen,
		CircuitProbeAt:  &next,
		CircuitAt:       &next,
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkDecode compares decode (the codec) with json.Unmarshal on data.
func checkDecode[T any](t testing.TB, data []byte, decode func([]byte) (T, error)) {
	t.Helper()
	got, gotErr := decode(data)
	var want T
	wantErr := json.Unmarshal(data, &want)
	if (gotErr != nil) != (wantErr != nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("input %q:\n got error %v\nwant error %v", data, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("input %q:\n got %#v\nwant %#v", data, got, want)
	}
}

// checkEncode compares AppendJSON with json.Marshal on v, which must marshal, and then checks
// that decoding the result agrees with encoding/json too.
func checkEncode[T interface{ AppendJSON([]byte) []byte }](t testing.TB, v T, decode func([]byte) (T, error)) {
	t.Helper()
	want := mustMarshal(t, v)
	prefix := []byte("prefix")
	got := v.AppendJSON(prefix[:len(prefix):len(prefix)])
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("AppendJSON lost dst: %q", got)
	}
	if got = got[len(prefix):]; !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON of %#v:\n got %s\nwant %s", v, got, want)
	}
	checkDecode(t, want, decode)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	d := sampleDelivery()
	b := d.AppendJSON(nil)
	if !bytes.Equal(b, mustMarshal(t, d)) {
		t.Fatalf("Delivery.AppendJSON differs from json.Marshal:\n%s\n%s", b, mustMarshal(t, d))
	}
	if fast, ok := decodeDeliveryFast(b); !ok || !reflect.DeepEqual(fast, d) {
		t.Fatalf("fast path: ok=%v, %#v, want %#v", ok, fast, d)
	}
	checkDecode(t, b, UnmarshalDelivery)

	a := sampleAttempt()
	b = a.AppendJSON(nil)
	if !bytes.Equal(b, mustMarshal(t, a)) {
		t.Fatalf("Attempt.AppendJSON differs from json.Marshal:\n%s\n%s", b, mustMarshal(t, a))
	}
	if fast, ok := decodeAttemptFast(b); !ok || !reflect.DeepEqual(fast, a) {
		t.Fatalf("fast path: ok=%v, %#v, want %#v", ok, fast, a)
	}
	checkDecode(t, b, UnmarshalAttempt)

	// The decoded value must not share memory with the input, which Kafka clients reuse.
	b = sampleDelivery().AppendJSON(nil)
	got, err := UnmarshalDelivery(b)
	if err != nil {
		t.Fatal(err)
	}
	clear(b)
	if !reflect.DeepEqual(got, sampleDelivery()) {
		t.Fatalf("decoded delivery changed with its input: %#v", got)
	}
}

// awkward are strings that exercise every branch of json.Marshal's string escaping.
var awkward = []string{
	"",
	"plain",
	`quote " and backslash \ and slash /`,
	"\b\f\n\r\t",
	"\x00\x01\x07\x0b\x0e\x1b\x1f \x7f",
	"<script>&amp;</script>",
	"line\u2028para\u2029end",
	"é日本語🎉",
	"\xff\xfe bad \xc3( utf8 \xed\xa0\x80 surrogate \xf4\x90\x80\x80 too big",
	"trailing partial \xe6\x97",
	"\u2027\u202a", // neighbours of U+2028/U+2029, not escaped
	"\ufffd",
	strings.Repeat("long ", 300),
}

func zones(t testing.TB) []*time.Location {
	z := []*time.Location{time.UTC, time.Local, time.FixedZone("", 0), time.FixedZone("IST", 5*3600+30*60),
		time.FixedZone("", -8*3600), time.FixedZone("", 3600+59*60+59), time.FixedZone("", -(23*3600 + 59*60))}
	if newYork != nil {
		z = append(z, newYork)
	} else {
		t.Log("no America/New_York zone")
	}
	return z
}

func awkwardTimes(t testing.TB) []time.Time {
	var ts []time.Time
	for _, loc := range zones(t) {
		for _, u := range []time.Time{
			{},
			time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC).Add(-24 * time.Hour),
			time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
			time.Date(2026, 3, 1, 12, 0, 0, 100, time.UTC),
			time.Date(2026, 7, 1, 12, 0, 0, 120000000, time.UTC),
		} {
			if _, err := u.In(loc).MarshalJSON(); err == nil {
				ts = append(ts, u.In(loc))
			}
		}
	}
	return append(ts, time.Now()) // with a monotonic reading, which JSON drops
}

func TestEncodeVaried(t *testing.T) {
	t.Parallel()
	times := awkwardTimes(t)
	ints := []int{0, 1, -1, 200, math.MaxInt, math.MinInt}
	for i, s := range awkward {
		tm := times[i%len(times)]
		n := ints[i%len(ints)]
		next := times[(i+3)%len(times)]
		a := Attempt{V: n, DeliveryID: s, EventID: s + "x", EndpointID: s, PartnerID: s, EventType: s,
			AttemptNo: -n, Trigger: s, StartedAt: tm, Status: n, LatencyMS: int64(n) * 7, LatencyUS: int64(n) * 7001, Outcome: s,
			ErrorCategory: s, ResponseExcerpt: s}
		checkEncode(t, a, UnmarshalAttempt)
		a.NextAttemptAt = &next
		checkEncode(t, a, UnmarshalAttempt)
		a.Circuit, a.CircuitProbeAt, a.CircuitAt = s, &tm, &next
		checkEncode(t, a, UnmarshalAttempt)
		a.Order = &OrderHold{Held: n, At: tm}
		checkEncode(t, a, UnmarshalAttempt)
		a.Order.HeadSince, a.OrderBroken = &next, true
		checkEncode(t, a, UnmarshalAttempt)

		d := Delivery{V: n, DeliveryID: s, EventID: s, EndpointID: s, PartnerID: s, EventType: s,
			AttemptNo: n, Trigger: s, Body: []byte(s), EventLSN: LSN(uint64(i) * 0x1234_5678_9abc_def1),
			CreatedAt: tm, DueAt: next, Deferrals: n, EndpointVersion: int64(n) << 33}
		checkEncode(t, d, UnmarshalDelivery)
		d.CommitTime = tm // omitted while zero (test records, older records)
		checkEncode(t, d, UnmarshalDelivery)
	}
	for _, tm := range times {
		a := sampleAttempt()
		a.StartedAt, a.NextAttemptAt = tm, &tm
		checkEncode(t, a, UnmarshalAttempt)
		d := sampleDelivery()
		d.CreatedAt, d.CommitTime, d.DueAt = tm, tm, tm
		checkEncode(t, d, UnmarshalDelivery)
		if _, ok := decodeDeliveryFast(d.AppendJSON(nil)); !ok {
			t.Errorf("fast path declined a delivery with time %v", tm)
		}
	}
	for _, body := range [][]byte{nil, {}, {0}, {0xff, 0xfe}, []byte("ab"), []byte("abc")} {
		d := sampleDelivery()
		d.Body = body
		checkEncode(t, d, UnmarshalDelivery)
		if _, ok := decodeDeliveryFast(d.AppendJSON(nil)); (body != nil) != ok {
			t.Errorf("body %q: fast path ok=%v", body, ok)
		}
	}
	for _, l := range []LSN{0, 1, 0xA, 0xFFFFFFFF, 0x1_00000000, 0xFFFFFFFF_FFFFFFFF, 0xABCDEF01_23456789} {
		d := sampleDelivery()
		d.EventLSN = l
		checkEncode(t, d, UnmarshalDelivery)
	}
	a := sampleAttempt()
	a.Status, a.ErrorCategory, a.ResponseExcerpt, a.NextAttemptAt = 0, "", "", nil // all omitted
	checkEncode(t, a, UnmarshalAttempt)
	checkEncode(t, Attempt{}, UnmarshalAttempt)
	checkEncode(t, Delivery{}, UnmarshalDelivery)
}

// TestEncodeUnmarshalableTime pins the one documented difference: json.Marshal refuses the
// time, AppendJSON writes what time.AppendFormat gives.
func TestEncodeUnmarshalableTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), `"10000-01-01T00:00:00Z"`},
		{time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), `"-0001-01-01T00:00:00Z"`},
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)), `"2026-01-01T00:00:00+24:00"`},
	} {
		a := sampleAttempt()
		a.StartedAt = tc.t
		if _, err := json.Marshal(a); err == nil {
			t.Errorf("json.Marshal accepted %v", tc.t)
		}
		got := string(a.AppendJSON(nil))
		if !strings.Contains(got, `"started_at":`+tc.want+`,`) {
			t.Errorf("AppendJSON with %v: %s", tc.t, got)
		}
	}
}

func TestDecodeCases(t *testing.T) {
	t.Parallel()
	typicalD := string(sampleDelivery().AppendJSON(nil))
	typicalA := string(sampleAttempt().AppendJSON(nil))
	for _, tc := range []struct {
		name string
		in   string
		fast bool // whether the fast path accepts
	}{
		{"typical", typicalD, true},
		{"empty object", `{}`, true},
		{"whitespace", " \t\r\n{ \"v\" :\n1 ,\t\"body\"\r: \"YQ==\" , \"due_at\" : \"2026-03-01T12:00:00Z\" }\n\t ", true},
		{"duplicates", `{"v":1,"v":2,"body":"YQ==","body":"YmM=","event_id":"a","event_id":"b","due_at":"2026-03-01T12:00:00Z","due_at":"2027-03-01T12:00:00+01:00"}`, true},
		{"empty body", `{"body":""}`, true},
		{"partial fields", `{"delivery_id":"dlv_1","attempt_no":7}`, true},
		{"offset times", `{"created_at":"2026-03-01T12:00:00.5+05:30","due_at":"2026-03-01T12:00:00-00:00"}`, true},
		{"min int", `{"v":-9223372036854775808,"attempt_no":9223372036854775807}`, true},
		{"minus zero", `{"v":-0}`, true},
		{"lsn lower case", `{"event_lsn":"ab/cdef0123"}`, true},
		{"lsn zero", `{"event_lsn":"0/0"}`, true},
		{"lsn leading zeros", `{"event_lsn":"00000001/00000002"}`, true},
		{"printable punctuation", `{"event_id":" !#$%&'()*+,-./:;<=>?@[]^_{|}~` + "`" + `"}`, true},

		{"unknown field", `{"v":1,"extra":{"a":[1,2,{"b":null}]},"event_id":"e"}`, false},
		{"key case", `{"V":1,"Event_ID":"e","EVENT_LSN":"1/2"}`, false},
		{"key escape", `{"event\u005fid":"e"}`, false},
		{"value escape", `{"event_id":"a\"b\\c\n\u00e9\/\b\f\r\t\u2028"}`, true},
		{"value surrogates", `{"event_id":"\ud83c\udf89 \ud83c \udf89 \ud83cx"}`, true},
		{"value escaped quote last", `{"event_id":"\"","v":1}`, true},
		{"value utf8", `{"event_id":"é日本🎉"}`, true},
		{"value invalid utf8", "{\"event_id\":\"a\xffb\xed\xa0\x80\"}", true},
		{"value del", "{\"event_id\":\"a\x7fb\"}", true},
		{"value control", "{\"event_id\":\"a\tb\"}", false},
		{"value control 0x1f", "{\"event_id\":\"a\x1fb\"}", false},
		{"value nul", "{\"event_id\":\"a\x00\"}", false},
		{"value escaped control", "{\"event_id\":\"\\\x01\"}", false},
		{"value bad escape", `{"event_id":"a\x"}`, false},
		{"value short unicode escape", `{"event_id":"\u12"}`, false},
		{"value backslash at end", `{"event_id":"\`, false},
		{"value escape then syntax error", `{"event_id":"\n",]`, false},
		{"body escaped", `{"body":"YQ\u003d\u003d"}`, false},
		{"body escaped slash", `{"body":"\/\/\/\/"}`, false},
		{"lsn escaped", `{"event_lsn":"1\/2"}`, false},
		{"null string", `{"event_id":null}`, false},
		{"null int", `{"v":null}`, false},
		{"null body", `{"body":"YQ==","body":null}`, false},
		{"null time", `{"due_at":null}`, false},
		{"null lsn", `{"event_lsn":null}`, false},
		{"null top", `null`, false},
		{"array top", `[]`, false},
		{"string top", `"x"`, false},
		{"empty", ``, false},
		{"space only", `   `, false},
		{"truncated", typicalD[:len(typicalD)-1], false},
		{"truncated string", `{"event_id":"abc`, false},
		{"trailing garbage", `{"v":1} x`, false},
		{"trailing object", `{}{}`, false},
		{"trailing comma", `{"v":1,}`, false},
		{"missing colon", `{"v" 1}`, false},
		{"missing comma", `{"v":1 "attempt_no":2}`, false},
		{"bom", "\ufeff{}", false},
		{"form feed", "{\f}", false},
		{"invalid base64", `{"body":"!!!!"}`, false},
		{"base64 no padding", `{"body":"YQ"}`, false},
		{"base64 url alphabet", `{"body":"-_-_"}`, false},
		{"base64 error then syntax error", `{"body":"!!!!",}`, false},
		{"bad month", `{"created_at":"2026-13-01T00:00:00Z"}`, false},
		{"not a time", `{"created_at":"yesterday"}`, false},
		{"time number", `{"created_at":5}`, false},
		{"time offset 24h", `{"created_at":"2026-03-01T12:00:00+24:00"}`, true},        // time.Time.UnmarshalJSON takes it
		{"time offset minutes 60", `{"created_at":"2026-03-01T12:00:00+01:60"}`, true}, // so does it this
		{"time escaped", `{"created_at":"2026-03-01T12:00:00\u005a"}`, false},
		{"time error then syntax error", `{"created_at":"x"]`, false},
		{"int overflow", `{"v":9223372036854775808}`, false},
		{"int underflow", `{"v":-9223372036854775809}`, false},
		{"int long", `{"v":00000000000000000001}`, false},
		{"int 20 digits", `{"latency_ms":12345678901234567890}`, false},
		{"int 2^64+1", `{"v":18446744073709551617}`, false},     // wraps to 1 in a uint64
		{"int -(2^64+1)", `{"v":-18446744073709551617}`, false}, // wraps to -1
		{"int 19 digits", `{"v":1000000000000000000,"deferrals":-9999999999999999999}`, false},
		{"int leading zero", `{"v":01}`, false},
		{"int fraction", `{"v":1.0}`, false},
		{"int exponent", `{"v":1e2}`, false},
		{"int plus", `{"v":+1}`, false},
		{"int minus only", `{"v":-}`, false},
		{"int as string", `{"v":"1"}`, false},
		{"string as int", `{"event_id":1}`, false},
		{"bool", `{"v":true}`, false},
		{"body number", `{"body":1}`, false},
		{"lsn number", `{"event_lsn":5}`, false},
		{"lsn junk suffix", `{"event_lsn":"1/2junk"}`, false},
		{"lsn long half", `{"event_lsn":"123456789/0"}`, false},
		{"lsn long low half", `{"event_lsn":"0/123456789"}`, false},
		{"lsn empty", `{"event_lsn":""}`, false},
		{"lsn no slash", `{"event_lsn":"12"}`, false},
		{"lsn not hex", `{"event_lsn":"G/1"}`, false},
		{"lsn spaces", `{"event_lsn":" 1/ 2"}`, false},
		{"lsn 0x", `{"event_lsn":"0x1/0x2"}`, false},
		{"lsn underscore", `{"event_lsn":"1_0/2"}`, false},
		{"attempt key", `{"next_attempt_at":"2026-03-01T12:00:00Z"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := decodeDeliveryFast([]byte(tc.in)); ok != tc.fast {
				t.Errorf("fast path ok=%v, want %v", ok, tc.fast)
			}
			checkDecode(t, []byte(tc.in), UnmarshalDelivery)
		})
	}

	for _, tc := range []struct {
		name string
		in   string
		fast bool
	}{
		{"typical", typicalA, true},
		{"empty object", `{}`, true},
		{"next attempt", `{"next_attempt_at":"2026-03-01T12:00:00.000000001Z"}`, true},
		{"next attempt twice", `{"next_attempt_at":"2026-03-01T12:00:00Z","next_attempt_at":"2026-03-02T12:00:00+02:00"}`, true},
		{"latency int64 max", `{"latency_ms":9223372036854775807,"status":-9223372036854775808}`, true},
		{"latency us", `{"latency_ms":0,"latency_us":850}`, true},
		{"latency us only", `{"latency_us":-9223372036854775808}`, true},
		{"latency us twice", `{"latency_us":1,"latency_ms":3,"latency_us":2}`, true},
		{"latency us null", `{"latency_ms":3,"latency_us":null}`, false},
		{"latency us then null", `{"latency_us":5,"latency_ms":3,"latency_us":null}`, false},
		{"latency us string", `{"latency_us":"5"}`, false},
		{"latency us key case", `{"Latency_US":5,"latency_ms":3}`, false},
		{"latency us overflow", `{"latency_us":9223372036854775808}`, false},
		{"next attempt null", `{"next_attempt_at":null}`, false},
		{"next attempt then null", `{"next_attempt_at":"2026-03-01T12:00:00Z","next_attempt_at":null}`, false},
		{"next attempt bad", `{"next_attempt_at":"2026-03-01"}`, false},
		{"latency overflow", `{"latency_ms":9223372036854775808}`, false},
		{"delivery key", `{"body":"YQ=="}`, false},
		{"key case", `{"Outcome":"failed"}`, false},
		{"excerpt escapes", `{"response_excerpt":"{\"error\":\"\u003cb\u003e\"}\n"}`, true},
		{"trailing", `{"status":200}]`, false},
	} {
		t.Run("attempt "+tc.name, func(t *testing.T) {
			if _, ok := decodeAttemptFast([]byte(tc.in)); ok != tc.fast {
				t.Errorf("fast path ok=%v, want %v", ok, tc.fast)
			}
			checkDecode(t, []byte(tc.in), UnmarshalAttempt)
		})
	}
}

// An attempt record written before latency_us existed is read with LatencyMS*1000, by the fast
// path and by encoding/json alike (Attempt.UnmarshalJSON); one that has the field keeps it, 0
// included. The table above holds the two paths to each other; this holds them to the rule.
func TestAttemptWithoutLatencyUS(t *testing.T) {
	t.Parallel()
	current := sampleAttempt().AppendJSON(nil)
	older := bytes.Replace(current, []byte(`,"latency_us":1234567`), nil, 1)
	if bytes.Equal(older, current) || !bytes.Contains(older, []byte(`"latency_ms":1234,`)) {
		t.Fatalf("no older record made of %s", current)
	}
	for _, c := range []struct {
		name string
		in   []byte
		fast bool
		want int64
	}{
		{"current", current, true, 1234567},
		{"older", older, true, 1234000},
		{"no latency at all", []byte(`{}`), true, 0},
		{"zero is kept", []byte(`{"latency_ms":12,"latency_us":0}`), true, 0},
		{"before latency_ms", []byte(`{"latency_us":5,"latency_ms":12}`), true, 5},
		{"null", []byte(`{"latency_ms":12,"latency_us":null}`), false, 12000},
		{"escaped key", []byte(`{"latency_ms":12,"latency\u005fus":7}`), false, 7},
		{"largest exact", []byte(`{"latency_ms":9223372036854775}`), true, 9223372036854775000},
		{"held to int64", []byte(`{"latency_ms":9223372036854776}`), true, math.MaxInt64},
		{"held to int64 below", []byte(`{"latency_ms":-9223372036854776}`), true, math.MinInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := decodeAttemptFast(c.in); ok != c.fast {
				t.Errorf("fast path ok=%v, want %v", ok, c.fast)
			}
			a, err := UnmarshalAttempt(c.in)
			if err != nil || a.LatencyUS != c.want {
				t.Errorf("UnmarshalAttempt: latency_us %d (%v), want %d", a.LatencyUS, err, c.want)
			}
			var std Attempt
			if err := json.Unmarshal(c.in, &std); err != nil || std.LatencyUS != c.want {
				t.Errorf("json.Unmarshal: latency_us %d (%v), want %d", std.LatencyUS, err, c.want)
			}
			checkDecode(t, c.in, UnmarshalAttempt)
		})
	}

	// The errors are encoding/json's as they were before Attempt had a method of its own.
	_, err := UnmarshalAttempt([]byte(`{"status":"503"}`))
	if want := "json: cannot unmarshal string into Go struct field Attempt.status of type int"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	var a Attempt
	if err := json.Unmarshal([]byte(`null`), &a); err != nil || !reflect.DeepEqual(a, Attempt{}) {
		t.Errorf("null: %+v, %v", a, err)
	}
}

// TestDecodeErrorsAreStd spot-checks that the declined inputs above really do error, so the
// error comparison in checkDecode is exercised (a table of only successes would not test it).
func TestDecodeErrorsAreStd(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"v":1} x`, `{"body":"!!!!"}`, `{"created_at":"yesterday"}`, `{"v":9223372036854775808}`, `{"event_lsn":""}`} {
		_, err := UnmarshalDelivery([]byte(in))
		var d Delivery
		want := json.Unmarshal([]byte(in), &d)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%s: error %v, encoding/json %v", in, err, want)
		}
	}
}

func seedDecode(f *testing.F, typical []byte) {
	f.Add(typical)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"v":-0,"body":"","event_lsn":"ab/CD","due_at":"2026-03-01T12:00:00.5+05:30","next_attempt_at":"2026-03-01T12:00:00Z"}`))
	f.Add([]byte(`{"V":1,"event_id":"a\u00e9","body":null,"status":1e2,"x":[true,false,null]}`))
	f.Add([]byte(" {\"latency_ms\" : 9223372036854775807 , \"v\":01}\n"))
	f.Add([]byte(`{"body":"YQ","created_at":"2026-13-01T00:00:00Z","event_lsn":"1/2junk"}`))
}

func FuzzUnmarshalDelivery(f *testing.F) {
	seedDecode(f, sampleDelivery().AppendJSON(nil))
	f.Add(sampleAttempt().AppendJSON(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data, UnmarshalDelivery)
	})
}

func FuzzUnmarshalAttempt(f *testing.F) {
	seedDecode(f, sampleAttempt().AppendJSON(nil))
	f.Add(sampleDelivery().AppendJSON(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data, UnmarshalAttempt)
	})
}

var newYork, _ = time.LoadLocation("America/New_York")

// fuzzTime builds a time from fuzzed parts: an instant, and a zone chosen by zone (UTC, Local,
// a named zone, or a fixed offset of zone seconds).
// fuzzTime makes a time from fuzzed numbers, always one RFC 3339 can express (years 0 to 9999,
// zone offsets under a day), which is every time json.Marshal encodes; the others are
// TestEncodeUnmarshalableTime's.
func fuzzTime(sec, nsec int64, zone int) time.Time {
	span := fuzzMaxSec - fuzzMinSec
	sec = fuzzMinSec + (sec%span+span)%span
	zone %= 24 * 3600
	t := time.Unix(sec, nsec%1e9)
	switch zone {
	case 0:
		return t.UTC()
	case 1:
		return t.Local()
	case 2:
		if newYork != nil {
			return t.In(newYork)
		}
	}
	return t.In(time.FixedZone("", zone))
}

// The range fuzzTime maps seconds into, a day inside RFC 3339's years so that no zone offset
// takes a time out of them.
var (
	fuzzMinSec = time.Date(0, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	fuzzMaxSec = time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
)

func seedEncode(f *testing.F) {
	for i, s := range awkward {
		f.Add(s, s+"<", int64(i*1e9)+1, int64(i*100), i*3600-5*1800, int64(-i), i%2 == 0)
	}
	f.Add("evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2", "customer.created", int64(1772366400), int64(123456789), 0, int64(503), true)
	f.Add("x", "y", int64(253402300799), int64(999999999), -3600, int64(math.MaxInt64), false) // 9999-12-31
	f.Add("x", "y", int64(-62135596800), int64(0), -3600, int64(0), true)                      // 0001-01-01
	f.Add("x", "y", int64(1772366400), int64(0), 0, int64(math.MinInt64), true)
	f.Add("x", "y", int64(-62167219200), int64(0), 1, int64(0), true) // year 0
}

func FuzzAttemptAppendJSON(f *testing.F) {
	seedEncode(f)
	f.Fuzz(func(t *testing.T, s1, s2 string, sec, nsec int64, zone int, n int64, withNext bool) {
		a := Attempt{V: int(n), DeliveryID: s1, EventID: s2, EndpointID: s1 + s2, PartnerID: s2, EventType: s1,
			AttemptNo: int(n >> 3), Trigger: s2, StartedAt: fuzzTime(sec, nsec, zone), Status: int(n % 600),
			LatencyMS: n, LatencyUS: n ^ 0x5a5a, Outcome: s1, ErrorCategory: s2, ResponseExcerpt: s1}
		if withNext {
			next := fuzzTime(sec+n%1e9, nsec*7, zone+3600)
			a.NextAttemptAt = &next
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("json.Marshal refuses a time fuzzTime made: %v", err)
		}
		checkEncode(t, a, UnmarshalAttempt)
		if _, ok := decodeAttemptFast(a.AppendJSON(nil)); !ok {
			t.Fatalf("fast path ok=%v on %s", ok, a.AppendJSON(nil))
		}
	})
}

func FuzzDeliveryAppendJSON(f *testing.F) {
	seedEncode(f)
	f.Fuzz(func(t *testing.T, s1, s2 string, sec, nsec int64, zone int, n int64, nilBody bool) {
		d := Delivery{V: int(n), DeliveryID: s1, EventID: s2, EndpointID: s1, PartnerID: s2, EventType: s1 + s2,
			AttemptNo: int(n >> 7), Trigger: s2, Body: []byte(s1), EventLSN: LSN(uint64(n) * 0x9E3779B97F4A7C15),
			CreatedAt: fuzzTime(sec, nsec, zone), DueAt: fuzzTime(nsec, sec, -zone), Deferrals: int(n % 3),
			EndpointVersion: n >> 3}
		if nilBody {
			d.Body = nil
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("json.Marshal refuses a time fuzzTime made: %v", err)
		}
		checkEncode(t, d, UnmarshalDelivery)
		if _, ok := decodeDeliveryFast(d.AppendJSON(nil)); ok == nilBody {
			t.Fatalf("fast path ok=%v on %s", ok, d.AppendJSON(nil))
		}
	})
}

func BenchmarkUnmarshalDelivery(b *testing.B) {
	data := sampleDelivery().AppendJSON(nil)
	b.Logf("record: %d bytes", len(data))
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := UnmarshalDelivery(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("std", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var d Delivery
			if err := json.Unmarshal(data, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnmarshalAttempt(b *testing.B) {
	data := sampleAttempt().AppendJSON(nil)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := UnmarshalAttempt(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("std", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var a Attempt
			if err := json.Unmarshal(data, &a); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAttemptAppendJSON(b *testing.B) {
	a := sampleAttempt()
	benchAppendJSON(b, a.AppendJSON, a)
}

func BenchmarkDeliveryAppendJSON(b *testing.B) {
	d := sampleDelivery()
	benchAppendJSON(b, d.AppendJSON, d)
}

// benchAppendJSON compares an AppendJSON, into a reused and into a new buffer, with json.Marshal of v.
func benchAppendJSON(b *testing.B, appendJSON func([]byte) []byte, v any) {
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = appendJSON(buf[:0])
		}
	})
	b.Run("fast-new-buffer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = appendJSON(nil)
		}
	})
	b.Run("std", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
