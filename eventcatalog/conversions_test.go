package eventcatalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookstream/hookstream/eventcatalog"
	"github.com/hookstream/hookstream/outbox"
)

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// R14: usage.finalized v2's example converted to v1 is v1's example, and back; each result fits
// its version's schema.
func TestConvertUsageFinalizedExamples(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	et, _ := eventcatalog.Lookup("usage.finalized")
	v1, _ := et.Version(1)
	v2, _ := et.Version(2)
	down, err := eventcatalog.ConvertData(et.Type, 2, 1, v2.Example)
	if err != nil || !jsonEqual(t, down, v1.Example) {
		t.Fatalf("v2 example to v1: %s %v\nwant %s", down, err, v1.Example)
	}
	up, err := eventcatalog.ConvertData(et.Type, 1, 2, v1.Example)
	if err != nil || !jsonEqual(t, up, v2.Example) {
		t.Fatalf("v1 example to v2: %s %v\nwant %s", up, err, v2.Example)
	}
	for _, ev := range []outbox.Event{{Type: et.Type, SchemaVersion: 1, Data: down}, {Type: et.Type, SchemaVersion: 2, Data: up}} {
		if err := c.CheckEvent(ev); err != nil {
			t.Errorf("converted to v%d: %s refused: %v", ev.SchemaVersion, ev.Data, err)
		}
	}
}

// The cost in both directions, exact at every size; what has no form in the other version is
// refused, never rounded or clamped.
func TestConvertUsageCost(t *testing.T) {
	t.Parallel()
	usage := func(cost string) []byte {
		return []byte(`{"usage_id":"use_1","customer_id":"cus_1","period_start":"2026-03-01T00:00:00Z","period_end":"2026-03-02T00:00:00Z","requests":1,"input_tokens":2,"output_tokens":3,"cost":` + cost + `}`)
	}
	down := []struct{ micros, value string }{
		{"0", "0.000000"},
		{"5", "0.000005"},
		{"999999", "0.999999"},
		{"1000000", "1.000000"},
		{"3418200", "3.418200"},
		{"9223372036854775807", "9223372036854.775807"},
		{"123456789012345678901234567890", "123456789012345678901234.567890"}, // beyond the schema, still exact
	}
	for _, tc := range down {
		got, err := eventcatalog.ConvertData("usage.finalized", 2, 1, usage(`{"amount_micros":`+tc.micros+`,"currency":"EUR"}`))
		if err != nil || !bytes.Contains(got, []byte(`"cost":{"currency":"EUR","value":"`+tc.value+`"}`)) {
			t.Errorf("%s micros: %s %v, want value %s", tc.micros, got, err, tc.value)
		}
	}
	up := []struct{ value, micros string }{
		{"0", "0"},
		{"-0.00", "0"},
		{"0.000001", "1"},
		{"3.4182", "3418200"},
		{"3.418200", "3418200"},
		{"12", "12000000"},
		{"0012.50", "12500000"},
		{"9223372036854.775807", "9223372036854775807"},
	}
	for _, tc := range up {
		got, err := eventcatalog.ConvertData("usage.finalized", 1, 2, usage(`{"value":"`+tc.value+`","currency":"EUR"}`))
		if err != nil || !bytes.Contains(got, []byte(`"cost":{"amount_micros":`+tc.micros+`,"currency":"EUR"}`)) {
			t.Errorf("value %s: %s %v, want %s micros", tc.value, got, err, tc.micros)
		}
	}
	refused := []struct {
		from, to int
		cost     string
		want     string
	}{
		{1, 2, `{"value":"-1.00","currency":"USD"}`, "negative"},
		{1, 2, `{"value":"9223372036854.775808","currency":"USD"}`, "beyond a 64-bit count"},
		{1, 2, `{"value":"1.2345678","currency":"USD"}`, "not a decimal string"},
		{1, 2, `{"value":3.4,"currency":"USD"}`, "not a decimal string"},
		{1, 2, `{"amount_micros":5,"currency":"USD"}`, "cost has no value"},
		{1, 2, `"3.40 USD"`, "cost is not an object"},
		{2, 1, `{"amount_micros":-5,"currency":"USD"}`, "not a non-negative integer"},
		{2, 1, `{"amount_micros":3.5,"currency":"USD"}`, "not a non-negative integer"},
		{2, 1, `{"amount_micros":"5","currency":"USD"}`, "not a non-negative integer"},
		{2, 1, `{"amount_micros":1e6,"currency":"USD"}`, "not a non-negative integer"},
		{2, 1, `{"amount_micros":007,"currency":"USD"}`, "v2 data is not a JSON object"}, // not JSON
		{2, 1, `{"value":"1.00","currency":"USD"}`, "cost has no amount_micros"},
	}
	for _, tc := range refused {
		got, err := eventcatalog.ConvertData("usage.finalized", tc.from, tc.to, usage(tc.cost))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("v%d to v%d of cost %s: %s %v, want an error saying %q", tc.from, tc.to, tc.cost, got, err, tc.want)
		}
	}
}

// A conversion changes only what it names: every other property, added ones and cost's own
// included, passes as it is, and a partner's "<" is not escaped. The same version is the
// same bytes; a conversion that does not exist is an error.
func TestConvertDataKeepsTheRest(t *testing.T) {
	t.Parallel()
	data := []byte(`{"usage_id":"use_1","note":"<b>café</b>","nested":{"a":[1,2.50,null]},"cost":{"amount_micros":7,"currency":"USD","region":"eu"}}`)
	got, err := eventcatalog.ConvertData("usage.finalized", 2, 1, data)
	want := `{"cost":{"currency":"USD","region":"eu","value":"0.000007"},"nested":{"a":[1,2.50,null]},"note":"<b>café</b>","usage_id":"use_1"}`
	if err != nil || string(got) != want {
		t.Fatalf("got  %s %v\nwant %s", got, err, want)
	}
	if same, err := eventcatalog.ConvertData("usage.finalized", 2, 2, data); err != nil || &same[0] != &data[0] {
		t.Fatalf("the same version: %s %v (must be the same bytes)", same, err)
	}
	for _, tc := range []struct {
		typ      string
		from, to int
	}{{"customer.created", 1, 2}, {"usage.finalized", 2, 3}, {"usage.finalized", 3, 1}, {"no.such", 2, 1}} {
		if _, err := eventcatalog.ConvertData(tc.typ, tc.from, tc.to, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "no conversion") {
			t.Errorf("%s v%d to v%d: %v, want no conversion", tc.typ, tc.from, tc.to, err)
		}
	}
	if _, err := eventcatalog.ConvertData("usage.finalized", 2, 1, []byte(`[]`)); err == nil {
		t.Error("an array converted")
	}
}

// R14: a pin is a catalog version: each type in its newest version at or below it. The pins an
// endpoint may take run from 1 to the newest version of any type.
func TestPinnedVersion(t *testing.T) {
	t.Parallel()
	if got := eventcatalog.PinVersions(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("PinVersions = %v, want [1 2]", got)
	}
	cases := []struct {
		typ       string
		pin, want int
	}{
		{"usage.finalized", 1, 1},
		{"usage.finalized", 2, 2},
		{"usage.finalized", 3, 2},
		{"usage.finalized", 0, 1}, // below every version: the first
		{"customer.created", 1, 1},
		{"customer.created", 2, 1},
		{"no.such", 5, 5},
	}
	for _, tc := range cases {
		if got := eventcatalog.PinnedVersion(tc.typ, tc.pin); got != tc.want {
			t.Errorf("PinnedVersion(%s, %d) = %d, want %d", tc.typ, tc.pin, got, tc.want)
		}
	}
}

// The envelope an endpoint receives: its data and schema_version in the pinned version, every
// other field as committed; the body itself, byte for byte, when nothing changes.
func TestConvertEnvelope(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	et, _ := eventcatalog.Lookup("usage.finalized")
	committed := outbox.Envelope{EventID: outbox.NewEventID(), Type: et.Type, OccurredAt: time.Date(2026, 3, 2, 0, 0, 0, 5000, time.UTC),
		PartnerID: "pa", Subject: outbox.Subject{Type: "usage", ID: "use_9a"}, SchemaVersion: 2, CorrelationID: "req_<1>", Data: et.Example}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as cdc serialises
	if err := enc.Encode(committed); err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")

	for _, pin := range []int{2, 3} {
		got, err := eventcatalog.ConvertEnvelope(body, et.Type, 2, pin)
		if err != nil || &got[0] != &body[0] {
			t.Fatalf("pin %d: %s %v (must be the same bytes)", pin, got, err)
		}
	}
	got, err := eventcatalog.ConvertEnvelope(body, et.Type, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	var env outbox.Envelope
	if err := json.Unmarshal(got, &env); err != nil {
		t.Fatal(err)
	}
	v1, _ := et.Version(1)
	if env.SchemaVersion != 1 || !jsonEqual(t, env.Data, v1.Example) {
		t.Fatalf("pinned to 1: %s", got)
	}
	if err := c.CheckEvent(env.Event()); err != nil {
		t.Fatalf("pinned to 1: %s refused: %v", got, err)
	}
	env.SchemaVersion, env.Data = committed.SchemaVersion, committed.Data
	if env.EventID != committed.EventID || !env.OccurredAt.Equal(committed.OccurredAt) || env.CorrelationID != committed.CorrelationID ||
		env.Subject != committed.Subject || env.PartnerID != committed.PartnerID || !strings.Contains(string(got), `"req_<1>"`) {
		t.Fatalf("pinned to 1, the other fields changed: %s", got)
	}
	// Back up: a v1 envelope to an endpoint pinned to 2 is the committed v2 envelope again.
	back, err := eventcatalog.ConvertEnvelope(got, et.Type, 1, 2)
	if err != nil || !jsonEqual(t, back, body) {
		t.Fatalf("v1 to pin 2: %s %v\nwant %s", back, err, body)
	}
	// A type with one version is sent as it is to every pin.
	cc, _ := eventcatalog.Lookup("customer.created")
	plain := []byte(`{"type":"customer.created","schema_version":1,"data":` + string(cc.Example) + `}`)
	if same, err := eventcatalog.ConvertEnvelope(plain, cc.Type, 1, 2); err != nil || &same[0] != &plain[0] {
		t.Fatalf("customer.created to pin 2: %s %v", same, err)
	}
	for _, bad := range [][]byte{[]byte(`not json`), []byte(`{"type":"usage.finalized","schema_version":1,"data":{}}`)} {
		if out, err := eventcatalog.ConvertEnvelope(bad, et.Type, 2, 1); err == nil {
			t.Errorf("%s converted to %s", bad, out)
		}
	}
}

// FuzzConvertUsageCost: every decimal v1 accepts that v2 can hold goes up and comes back as the
// same amount, and nothing panics.
func FuzzConvertUsageCost(f *testing.F) {
	for _, s := range []string{"0", "3.4182", "-0.00", "9223372036854.775807", "1e3", "12.1234567", "007.5"} {
		f.Add(s)
	}
	decimal := regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,6})?$`)
	f.Fuzz(func(t *testing.T, value string) {
		cost, _ := json.Marshal(map[string]string{"value": value, "currency": "USD"})
		up, err := eventcatalog.ConvertData("usage.finalized", 1, 2, []byte(`{"cost":`+string(cost)+`}`))
		if err != nil {
			return
		}
		if !decimal.MatchString(value) {
			t.Fatalf("%q is no decimal of v1 and converted: %s", value, up)
		}
		down, err := eventcatalog.ConvertData("usage.finalized", 2, 1, up)
		if err != nil {
			t.Fatalf("%q: %s does not come back: %v", value, up, err)
		}
		var d struct {
			Cost struct{ Value string } `json:"cost"`
		}
		if err := json.Unmarshal(down, &d); err != nil {
			t.Fatal(err)
		}
		a, _ := new(big.Rat).SetString(value)
		b, _ := new(big.Rat).SetString(d.Cost.Value)
		if a == nil || b == nil || a.Cmp(b) != 0 {
			t.Fatalf("%q came back as %q", value, d.Cost.Value)
		}
	})
}

// An operator's type is published at version 1 only: an operator endpoint on the newest pin
// gets it as written, not a failed conversion.
func TestOperatorTypesKeepTheirVersionUnderAnyPin(t *testing.T) {
	t.Parallel()
	for _, et := range eventcatalog.OperatorTypes() {
		if got := eventcatalog.PinnedVersion(et.Type, 2); got != 1 {
			t.Errorf("PinnedVersion(%s, 2) = %d, want 1", et.Type, got)
		}
		body := []byte(`{"type":"` + et.Type + `","schema_version":1,"data":{}}`)
		out, err := eventcatalog.ConvertEnvelope(body, et.Type, 1, 2)
		if err != nil || string(out) != string(body) {
			t.Errorf("ConvertEnvelope(%s, 1, pin 2) = %s, %v; want the body as it is", et.Type, out, err)
		}
	}
}
