package eventcatalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hookstream/hookstream/outbox"
)

// The operator event types (design.md section 8, "Operator events"): what the platform operator
// hears on its own endpoints, beside Prometheus. They are written under outbox.OperatorPartnerID
// only, never under a real partner, and GET /v1/event-types (the partners' catalog) does not
// list them; GET /v1/operator/event-types does.
const (
	OperatorEndpointDisabled      = "operator.endpoint.disabled"
	OperatorDeliveryDeadLettered  = "operator.delivery.dead_lettered"
	OperatorReplayJobSucceeded    = "operator.replay_job.succeeded"
	OperatorReplayJobFailed       = "operator.replay_job.failed"
	OperatorQuotaRefused          = "operator.quota.refused"
	OperatorOutboxRowDeadLettered = "operator.cdc.dead_lettered"
)

// OperatorTypePrefix starts the name of every operator event type.
const OperatorTypePrefix = "operator."

// CategoryOperator is the category of the operator's types.
const CategoryOperator = "operator"

// OperatorTypes returns the operator's catalog in display order, a deep copy as Types is.
func OperatorTypes() []EventType {
	out := make([]EventType, len(operatorCatalog))
	for i, et := range operatorCatalog {
		out[i] = et.clone()
	}
	return out
}

// IsOperatorType reports whether typ is named as an operator event type.
func IsOperatorType(typ string) bool { return strings.HasPrefix(typ, OperatorTypePrefix) }

// checkAudience refuses an event written for the wrong audience: an operator type under a real
// partner would reach that partner's endpoints, feed and stream, and a partner type under the
// operator's partner is no event the operator subscribes to. Both are refused as a type the
// catalog does not publish for that partner (cdc dead-letters them as unknown_type).
func checkAudience(ev outbox.Event) error {
	op := ev.PartnerID == outbox.OperatorPartnerID
	switch {
	case IsOperatorType(ev.Type) && !op:
		return &outbox.ValidationError{Field: "type", Err: outbox.ErrInvalidType,
			Reason: fmt.Sprintf("%s is an operator event type, published only under the operator's partner %s", quote(ev.Type), outbox.OperatorPartnerID)}
	case op && !IsOperatorType(ev.Type):
		return &outbox.ValidationError{Field: "type", Err: outbox.ErrInvalidType,
			Reason: fmt.Sprintf("partner %s receives only operator event types (operator.*), not %s", outbox.OperatorPartnerID, quote(ev.Type))}
	}
	return nil
}

// lookupOperator is Lookup over the operator's catalog.
func lookupOperator(typ string) (EventType, bool) {
	i := slices.IndexFunc(operatorCatalog, func(et EventType) bool { return et.Type == typ })
	if i < 0 {
		return EventType{}, false
	}
	return operatorCatalog[i].clone(), true
}

var (
	partnerID     = schema{"type": "string", "minLength": 1, "maxLength": 255, "description": "the partner the fact is about"}
	operatorCount = schema{"type": "integer", "minimum": 0}
	shortText     = schema{"type": "string", "maxLength": 2048}
	deliveryID    = schema{"type": "string", "pattern": "^dlv_[a-z2-7]{26}$"}
	eventID       = schema{"type": "string", "pattern": "^evt_[0-9A-Z]{26}$"}
	replayJobID   = schema{"type": "string", "pattern": "^rpl_[0-9A-Z]{26}$"}
)

func operatorType(typ, description string, s schema, example string) EventType {
	return eventType(typ, CategoryOperator, description, s, example)
}

// operatorCatalog is the list of operator event types, in the order
// GET /v1/operator/event-types shows them.
var operatorCatalog = []EventType{
	operatorType(OperatorEndpointDisabled, "A partner's endpoint (or an operator endpoint) was disabled: by the failure window, by a 410 Gone answer, or through the admin API. Written in the transaction that disables it, beside the partner's endpoint.disabled.",
		object([]string{"partner_id", "endpoint_id", "reason"}, schema{
			"partner_id":    partnerID,
			"endpoint_id":   endpointID,
			"reason":        schema{"type": "string", "maxLength": 500},
			"failing_since": timestamp,
			"disabled_by":   schema{"type": "string", "enum": []string{"operator", "partner"}},
		}),
		`{"partner_id":"acme","endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","reason":"failing with no success for 120h0m0s","failing_since":"2026-03-01T09:30:00Z"}`),
	operatorType(OperatorDeliveryDeadLettered, "A partner's delivery failed for good: its last attempt failed and no retry is left (the delivery's record went to the dlq topic). Written by the recorder in the transaction that marks the delivery failed; deliveries to operator endpoints do not raise it.",
		object([]string{"partner_id", "endpoint_id", "delivery_id", "event_id", "event_type", "attempt_count"}, schema{
			"partner_id":          partnerID,
			"endpoint_id":         endpointID,
			"delivery_id":         deliveryID,
			"event_id":            eventID,
			"event_type":          schema{"type": "string", "maxLength": 128},
			"attempt_count":       schema{"type": "integer", "minimum": 1},
			"last_status":         schema{"type": "integer", "minimum": 0, "maximum": 999},
			"last_error_category": schema{"type": "string", "maxLength": 64},
		}),
		`{"partner_id":"acme","endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","delivery_id":"dlv_q3k7m2x5c4v6b7n2p3r4s5t6u7","event_id":"evt_01J9Z8Q4W6T1V2X3Y4Z5A6B7C9","event_type":"customer.created","attempt_count":10,"last_status":503,"last_error_category":"http_status"}`),
	operatorType(OperatorReplayJobSucceeded, "A bulk replay job finished with every selected delivery replayed (some of them may have failed again; failed counts them). Written in the transaction that records the job's final state.",
		replayJobSchema, `{"partner_id":"acme","endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","job_id":"rpl_01J9Z8S0000000000000000000","state":"succeeded","total":120,"done":120,"failed":2}`),
	operatorType(OperatorReplayJobFailed, "A bulk replay job stopped without finishing (its endpoint was deleted, the event log no longer held its events, the per-job limit was reached); error says why. Written in the transaction that records the job's final state.",
		replayJobSchema, `{"partner_id":"acme","endpoint_id":"ep_01J9Z8Q4W6T1V2X3Y4Z5A6B7C8","job_id":"rpl_01J9Z8S0000000000000000000","state":"failed","total":100000,"done":100000,"failed":0,"error":"stopped at the 100000 deliveries one job may replay; resume from 2026-03-01T09:30:00Z"}`),
	operatorType(OperatorQuotaRefused, "The admin API refused a partner's request for a quota (429 quota_exceeded, or 422 replay_too_large). At most one per partner and quota per minute from each admin process; the counter hookstream_admin_quota_refusals_total counts every refusal.",
		object([]string{"partner_id", "quota", "limit", "usage"}, schema{
			"partner_id": partnerID,
			"quota":      schema{"type": "string", "enum": []string{"endpoints", "replay_jobs", "test_events_per_minute", "replays_per_minute", "replay_deliveries"}},
			"limit":      operatorCount,
			"usage":      operatorCount,
			"route":      schema{"type": "string", "maxLength": 200, "description": "the route refused, as the admin API's metrics name it"},
		}),
		`{"partner_id":"acme","quota":"test_events_per_minute","limit":10,"usage":10,"route":"POST /v1/partners/{pid}/endpoints/{eid}/test"}`),
	operatorType(OperatorOutboxRowDeadLettered, "cdc refused to publish an outbox row (the platform wrote a row it could not publish: malformed, too large, of an unknown type or version, or with invalid data): it is in GET /v1/outbox/dead-letters and the dlq topic, and reached no partner. Written by cdc in the transaction that inserts the outbox_dead_letter row, once per row.",
		object([]string{"partner_id", "event_id", "type", "reason", "detail"}, schema{
			"partner_id": schema{"type": "string", "maxLength": 255, "description": "the refused row's partner_id, as written"},
			"event_id":   schema{"type": "string", "maxLength": 255, "description": "the refused row's event_id, as written (it may be malformed)"},
			"type":       schema{"type": "string", "maxLength": 255, "description": "the refused row's type, as written"},
			"reason":     schema{"type": "string", "enum": []string{"malformed", "too_large", "unknown_type", "schema_version", "invalid_data"}},
			"detail":     shortText,
		}),
		`{"partner_id":"acme","event_id":"evt_01J9Z8Q4W6T1V2X3Y4Z5A6B7CA","type":"customer.created","reason":"invalid_data","detail":"data/status: value must be one of 'active', 'suspended' (customer.created v1, keyword properties/status/enum)"}`),
}

var replayJobSchema = object([]string{"partner_id", "endpoint_id", "job_id", "state", "total", "done", "failed"}, schema{
	"partner_id":  partnerID,
	"endpoint_id": endpointID,
	"job_id":      replayJobID,
	"state":       schema{"type": "string", "enum": []string{"succeeded", "failed"}},
	"total":       operatorCount,
	"done":        operatorCount,
	"failed":      operatorCount,
	"error":       shortText,
})
