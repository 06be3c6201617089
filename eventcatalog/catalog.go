package eventcatalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"math"
	"slices"
)

// EventType is one entry of the catalog, as GET /v1/event-types publishes it. SchemaVersion,
// Schema and Example are those of the type's newest version, the one a platform writes from
// now on; Versions lists every published version, oldest first, the newest included (R14, R31).
type EventType struct {
	Type          string          `json:"type"`
	Category      string          `json:"category"` // "business" or "operational"
	Description   string          `json:"description"`
	SchemaVersion int             `json:"schema_version"`
	Schema        json.RawMessage `json:"schema"`
	Example       json.RawMessage `json:"example"`
	Versions      []Version       `json:"versions"`
}

// Version is one published schema version of a type: its JSON Schema and example, and what
// changed from the version before it (empty on a type's first version).
type Version struct {
	SchemaVersion int             `json:"schema_version"`
	Changes       string          `json:"changes,omitempty"`
	Schema        json.RawMessage `json:"schema"`
	Example       json.RawMessage `json:"example"`
}

// TestEventType is the type of the test events an endpoint owner asks for (R25).
const TestEventType = "webhook.test"

// ReservedTypes returns the catalog's types the platform never writes to the outbox: hookstream
// sends them itself (webhook.test goes to one endpoint straight through the deliveries topic).
// PostgreSQL refuses an outbox row of one of them (migration 0021, constraint
// outbox_event_type_reserved; design.md section 4), whoever writes it.
func ReservedTypes() []string { return []string{TestEventType} }

// Types returns the catalog in display order. It is a deep copy: a caller that changes it
// changes neither what is published nor what Catalog checks.
func Types() []EventType {
	out := make([]EventType, len(catalog))
	for i, et := range catalog {
		out[i] = et.clone()
	}
	return out
}

// Lookup returns the entry of typ (a copy), or false when the catalog has no such type. It
// finds the operator's types too (OperatorTypes).
func Lookup(typ string) (EventType, bool) {
	i := slices.IndexFunc(catalog, func(et EventType) bool { return et.Type == typ })
	if i < 0 {
		return lookupOperator(typ)
	}
	return catalog[i].clone(), true
}

// EnvelopeSchema returns the JSON Schema of the envelope every event arrives in (R8); the data
// member holds the schema of the event's type. It returns a fresh copy on each call.
func EnvelopeSchema() json.RawMessage { return slices.Clone(envelopeSchema) }

// Version returns the published version v of the type, or false when the type has no such
// version.
func (et EventType) Version(v int) (Version, bool) {
	i := slices.IndexFunc(et.Versions, func(ver Version) bool { return ver.SchemaVersion == v })
	if i < 0 {
		return Version{}, false
	}
	return et.Versions[i], true
}

func (et EventType) clone() EventType {
	et.Schema = slices.Clone(et.Schema)
	et.Example = slices.Clone(et.Example)
	et.Versions = slices.Clone(et.Versions)
	for i := range et.Versions {
		et.Versions[i].Schema = slices.Clone(et.Versions[i].Schema)
		et.Versions[i].Example = slices.Clone(et.Versions[i].Example)
	}
	return et
}

// The schemas are JSON Schema draft 2020-12, written as Go maps so the helpers below keep the
// recurring shapes (identifiers, timestamps, money) identical across types. json.Marshal sorts
// map keys, so the published bytes are stable.
type schema = map[string]any

func object(required []string, props schema) schema {
	return schema{"type": "object", "required": required, "properties": props}
}

func idOf(prefix, description string) schema {
	return schema{"type": "string", "pattern": "^" + prefix + "_[A-Za-z0-9]+$", "description": description}
}

var (
	timestamp = schema{"type": "string", "format": "date-time"}
	// money is R7: a decimal string, never a float, with its currency. The precision and
	// rounding rules are published in the schema's own descriptions (MoneyPrecision), so a
	// partner reads them where it reads the shape.
	money = object([]string{"value", "currency"}, schema{
		"value":    schema{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]{1,6})?$`, "description": "decimal amount as a string. " + MoneyPrecision},
		"currency": schema{"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code"},
	})
	// percent is a spend ratio of a budget, in percent, as a decimal string (PercentPrecision).
	percent    = schema{"type": "string", "pattern": `^[0-9]+(\.[0-9]{1,2})?$`, "description": PercentPrecision}
	customerID = idOf("cus", "the customer")
	apiKeyID   = idOf("key", "the API key (its identifier, never the key)")
	// endpointID is what hookstream's admin API issues: "ep_" and a ULID.
	endpointID = schema{"type": "string", "pattern": "^ep_[0-9A-Z]{26}$"}
	// micros is money as an integer count of millionths of the currency (R7's minor-unit
	// integers, at the catalog's 6 decimals): usage.finalized's cost from version 2. Bounded to
	// a signed 64-bit integer; a reader in JavaScript parses it as a BigInt above 2^53.
	micros = object([]string{"amount_micros", "currency"}, schema{
		"amount_micros": schema{"type": "integer", "minimum": 0, "maximum": int64(math.MaxInt64),
			"description": "the amount in millionths of the currency (3418200 is 3.418200), never negative; exact, never rounded"},
		"currency": schema{"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code"},
	})
)

// usageSchema is usage.finalized's data with cost of the given money shape: its versions
// differ in that alone.
func usageSchema(cost schema) schema {
	return object([]string{"usage_id", "customer_id", "period_start", "period_end", "requests", "input_tokens", "output_tokens", "cost"}, schema{
		"usage_id":      idOf("use", "the finalized usage record"),
		"customer_id":   customerID,
		"api_key_id":    apiKeyID,
		"period_start":  timestamp,
		"period_end":    timestamp,
		"requests":      schema{"type": "integer", "minimum": 0},
		"input_tokens":  schema{"type": "integer", "minimum": 0},
		"output_tokens": schema{"type": "integer", "minimum": 0},
		"cost":          cost,
	})
}

// UsageFinalizedV2Changes is what version 2 of usage.finalized changed, published with it.
const UsageFinalizedV2Changes = "cost is an integer count of millionths of the currency, cost.amount_micros (3418200), instead of the decimal string cost.value (\"3.418200\"). " +
	"Usage is billed in fractions of a cent, so minor units (cents) would round it, and the catalog never rounds money; millionths hold the catalog's 6 decimals exactly, " +
	"and a receiver sums them with 64-bit integers instead of a decimal library. The amount is the same in both versions: an endpoint pinned to version 1 " +
	"receives cost.value with the point put back (6 decimals), and an event written at version 1 reaches an endpoint pinned to 2 with the digits shifted."

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the catalog is a literal; a failure here is a programming error
	}
	return b
}

// eventType is a type at its first version, 1.
func eventType(typ, category, description string, s schema, example string) EventType {
	v := Version{SchemaVersion: 1, Schema: mustJSON(s), Example: json.RawMessage(example)}
	return EventType{Type: typ, Category: category, Description: description, SchemaVersion: 1,
		Schema: v.Schema, Example: v.Example, Versions: []Version{v}}
}

// nextVersion publishes version of et, which becomes its newest: a version number is a
// catalog version (conversions.go), so version is above every number any type used before it.
// changes says what a partner on the previous version notices and why it changed.
func (et EventType) nextVersion(version int, changes string, s schema, example string) EventType {
	v := Version{SchemaVersion: version, Changes: changes, Schema: mustJSON(s), Example: json.RawMessage(example)}
	et.SchemaVersion, et.Schema, et.Example = version, v.Schema, v.Example
	et.Versions = append(slices.Clone(et.Versions), v)
	return et
}

// MoneyPrecision and PercentPrecision are the decimal rules of R7, published in the schemas.
// Package reseller implements them (reseller.Decimal, reseller.Crossings).
const (
	MoneyPrecision   = "At most 6 decimals, never a float; written with at least 2. An amount with more decimals is refused, never rounded: each value is exact, and sums and differences of values are exact."
	PercentPrecision = "spent / limit x 100, at most 2 decimals, truncated toward zero (so a value shown as 80.00 is never below 80 %); whether a threshold is crossed is decided on the exact ratio, not on this rounded value."
)

// catalog is the list of event types, in the order GET /v1/event-types shows them. Payloads
// carry identifiers and minimal state, never API key material, credentials, prompts or abuse
// evidence (R6); money is a decimal string with an ISO 4217 currency (R7).
var catalog = []EventType{
	eventType("customer.created", "business", "A customer account was created.",
		object([]string{"customer_id", "status", "created_at"}, schema{
			"customer_id": customerID,
			"status":      schema{"type": "string", "enum": []string{"active", "suspended"}},
			"created_at":  timestamp,
		}),
		`{"customer_id":"cus_8f2k1","status":"active","created_at":"2026-03-01T09:30:00Z"}`),
	eventType("customer.updated", "business", "A customer's account changed; changed lists the fields, fetch the customer for their values.",
		object([]string{"customer_id", "changed", "version"}, schema{
			"customer_id": customerID,
			"changed":     schema{"type": "array", "items": schema{"type": "string"}, "minItems": 1},
			"version":     schema{"type": "integer", "minimum": 1, "description": "the customer's resource version; compare before applying"},
		}),
		`{"customer_id":"cus_8f2k1","changed":["status"],"version":7}`),
	eventType("customer.deleted", "business", "A customer account was deleted.",
		object([]string{"customer_id"}, schema{"customer_id": customerID}),
		`{"customer_id":"cus_8f2k1"}`),
	eventType("api_key.created", "business", "An API key was issued to a customer. The key itself is never sent.",
		object([]string{"api_key_id", "customer_id", "status"}, schema{
			"api_key_id":  apiKeyID,
			"customer_id": customerID,
			"name":        schema{"type": "string", "maxLength": 200},
			"key_hint":    schema{"type": "string", "pattern": "^[A-Za-z0-9]{4}$", "description": "the last 4 characters, for display"},
			"status":      schema{"type": "string", "enum": []string{"active"}},
		}),
		`{"api_key_id":"key_3n9q","customer_id":"cus_8f2k1","name":"production","key_hint":"x7Qa","status":"active"}`),
	eventType("api_key.status_changed", "business", "An API key was suspended, reactivated or revoked.",
		object([]string{"api_key_id", "customer_id", "previous_status", "status", "version"}, schema{
			"api_key_id":      apiKeyID,
			"customer_id":     customerID,
			"previous_status": schema{"type": "string", "enum": []string{"active", "suspended", "revoked"}},
			"status":          schema{"type": "string", "enum": []string{"active", "suspended", "revoked"}},
			"reason":          schema{"type": "string", "enum": []string{"customer_request", "budget_exhausted", "balance_depleted", "policy", "other"}},
			"version":         schema{"type": "integer", "minimum": 1},
		}),
		`{"api_key_id":"key_3n9q","customer_id":"cus_8f2k1","previous_status":"active","status":"suspended","reason":"budget_exhausted","version":4}`),
	eventType("balance.credited", "business", "Credit was added to a customer's prepaid balance.",
		object([]string{"customer_id", "credit_id", "amount", "balance"}, schema{
			"customer_id": customerID,
			"credit_id":   idOf("crd", "the ledger entry"),
			"amount":      money,
			"balance":     money,
			"source":      schema{"type": "string", "enum": []string{"purchase", "promotion", "refund"}},
		}),
		`{"customer_id":"cus_8f2k1","credit_id":"crd_51x","amount":{"value":"50.00","currency":"USD"},"balance":{"value":"62.40","currency":"USD"},"source":"purchase"}`),
	eventType("balance.adjusted", "business", "A ledger adjustment changed a customer's balance (a correction after usage was finalized).",
		object([]string{"customer_id", "adjustment_id", "amount", "balance", "reason"}, schema{
			"customer_id":   customerID,
			"adjustment_id": idOf("adj", "the ledger adjustment"),
			"amount":        money,
			"balance":       money,
			"reason":        schema{"type": "string", "enum": []string{"usage_correction", "goodwill", "chargeback", "other"}},
		}),
		`{"customer_id":"cus_8f2k1","adjustment_id":"adj_77","amount":{"value":"-1.250000","currency":"USD"},"balance":{"value":"61.15","currency":"USD"},"reason":"usage_correction"}`),
	eventType("balance.low", "business", "A customer's balance fell below its low-balance threshold. Emitted when the balance crosses from at or above the threshold to below it; re-armed when the balance rises back to or above it.",
		object([]string{"customer_id", "balance", "threshold"}, schema{
			"customer_id": customerID,
			"balance":     money,
			"threshold":   money,
		}),
		`{"customer_id":"cus_8f2k1","balance":{"value":"4.90","currency":"USD"},"threshold":{"value":"5.00","currency":"USD"}}`),
	eventType("budget.threshold_crossed", "business", "Spending crossed a budget threshold: emitted when the prior share of the limit was below the threshold and the new one is at or above it; a reversal or credit that brings the share back below re-arms it, and a later change may cross it anew. One change that crosses several thresholds emits one event per threshold, lowest first. A budget's thresholds are 80 and 100 by default, any of 50, 80, 90 and 100.",
		object([]string{"budget_id", "customer_id", "threshold_percent", "previous_percent", "current_percent", "spent", "limit", "period_start", "period_end"}, schema{
			"budget_id":         idOf("bud", "the budget"),
			"customer_id":       customerID,
			"api_key_id":        apiKeyID,
			"threshold_percent": schema{"type": "integer", "enum": []int{50, 80, 90, 100}},
			"previous_percent":  percent,
			"current_percent":   percent,
			"spent":             money,
			"limit":             money,
			"period_start":      timestamp,
			"period_end":        timestamp,
		}),
		`{"budget_id":"bud_12","customer_id":"cus_8f2k1","threshold_percent":80,"previous_percent":"78.10","current_percent":"81.35","spent":{"value":"81.35","currency":"USD"},"limit":{"value":"100.00","currency":"USD"},"period_start":"2026-03-01T00:00:00Z","period_end":"2026-04-01T00:00:00Z"}`),
	eventType("usage.finalized", "business", "Usage of a period was finalized for billing; later corrections arrive as balance.adjusted.",
		usageSchema(money),
		`{"usage_id":"use_9a","customer_id":"cus_8f2k1","api_key_id":"key_3n9q","period_start":"2026-03-01T00:00:00Z","period_end":"2026-03-02T00:00:00Z","requests":1204,"input_tokens":880231,"output_tokens":120977,"cost":{"value":"3.418200","currency":"USD"}}`).
		nextVersion(2, UsageFinalizedV2Changes, usageSchema(micros),
			`{"usage_id":"use_9a","customer_id":"cus_8f2k1","api_key_id":"key_3n9q","period_start":"2026-03-01T00:00:00Z","period_end":"2026-03-02T00:00:00Z","requests":1204,"input_tokens":880231,"output_tokens":120977,"cost":{"amount_micros":3418200,"currency":"USD"}}`),
	eventType("endpoint.failing", "operational", "One of the partner's endpoints has failed with no success since failing_since; it will be disabled if it keeps failing.",
		object([]string{"endpoint_id", "failing_since"}, schema{
			"endpoint_id":   endpointID,
			"failing_since": timestamp,
		}),
		`{"endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","failing_since":"2026-03-01T09:30:00Z"}`),
	eventType("endpoint.disabled", "operational", "One of the partner's endpoints was disabled: by the failure window, by a 410 Gone answer, or through the admin API. Events are not delivered to it until it is enabled; a replay from the log recovers them.",
		object([]string{"endpoint_id", "reason"}, schema{
			"endpoint_id":   endpointID,
			"reason":        schema{"type": "string", "maxLength": 500},
			"failing_since": timestamp,
			"disabled_by":   schema{"type": "string", "enum": []string{"operator", "partner"}},
		}),
		`{"endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","reason":"maintenance of the receiver","disabled_by":"partner"}`),
	eventType("endpoint.order_broken", "operational", "One of the partner's strict ordered endpoints gave up its order: the event at its head failed for good (its retry schedule exhausted, or a failure that is not retried), and the events held behind it are delivered without it. The history shows the attempt with order_broken; a replay delivers the event again, after those.",
		object([]string{"endpoint_id", "delivery_id", "event_id", "event_type", "attempts", "failed_at"}, schema{
			"endpoint_id": endpointID,
			"delivery_id": idOf("dlv", "the delivery that failed at the head"),
			"event_id":    idOf("evt", "the event of that delivery"),
			"event_type":  schema{"type": "string", "maxLength": 200},
			"attempts":    schema{"type": "integer", "minimum": 1},
			"failed_at":   timestamp,
		}),
		`{"endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","delivery_id":"dlv_f7etze3it5w5uagyu23ndwtxha","event_id":"evt_01JDZ8X7Q4B5N6M7P8R9S0T1U2","event_type":"customer.created","attempts":10,"failed_at":"2026-03-04T09:30:00Z"}`),
	eventType(TestEventType, "operational", "A test event sent through POST …/endpoints/{eid}/test to one endpoint only. It needs no action.",
		object([]string{"endpoint_id", "message"}, schema{
			"endpoint_id": endpointID,
			"message":     schema{"type": "string"},
		}),
		`{"endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","message":"This is a test event from hookstream. It needs no action."}`),
}

// envelopeSource is the schema of the envelope every event arrives in (R8), the file readers of
// the event log can take as it is (docs/consuming-the-log.md).
//
//go:embed envelope.schema.json
var envelopeSource []byte

// envelopeSchema is envelopeSource, compacted.
var envelopeSchema = mustCompact(envelopeSource)

func mustCompact(b []byte) json.RawMessage {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		panic(err) // an embedded file of the package; a failure here is a programming error
	}
	return out.Bytes()
}
