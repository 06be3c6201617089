package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookstream/hookstream/outbox"
)

// DisabledEventType is the operational event that announces a disabled endpoint.
const DisabledEventType = "endpoint.disabled"

// Who disabled an endpoint through the admin API: the values of endpoint.disabled's disabled_by.
const (
	ByOperator = "operator"
	ByPartner  = "partner"
)

// Disabling names an endpoint to disable, why, and who asked.
type Disabling struct {
	PartnerID  string
	EndpointID string
	// Reason becomes the endpoint's disabled_reason and the event's reason.
	Reason string
	// By is ByOperator or ByPartner when a person disabled the endpoint through the admin API,
	// empty when hookstream did (a 410 Gone, the failure window).
	By string
	// At is the endpoint's updated_at; zero stamps the transaction's time. The failure window
	// passes the time it checks as of.
	At time.Time
}

// Disabled is the data of an endpoint.disabled event, in the shape the event catalog publishes:
// endpoint_id and reason always, failing_since when the endpoint was failing, disabled_by when a
// person disabled it.
type Disabled struct {
	EndpointID   string     `json:"endpoint_id"`
	Reason       string     `json:"reason"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	DisabledBy   string     `json:"disabled_by,omitempty"`
}

// Disable disables the partner's endpoint if it is active and, in tx, writes its
// endpoint.disabled event through the outbox, so the partner hears of it on its other endpoints
// (R23, R25). It is the one place an endpoint is disabled, whoever triggers it (an operator or
// partner, a 410 Gone, the failure window), so the event cannot differ by trigger. The endpoint
// keeps its failing_since; its version moves on. An endpoint already disabled, or not the
// partner's, is left as it is and nothing is written: changed is false.
func Disable(ctx context.Context, tx pgx.Tx, d Disabling) (changed bool, err error) {
	switch d.By {
	case "", ByOperator, ByPartner:
	default:
		return false, fmt.Errorf("endpoints: disable %s: disabled by %q, not %q or %q", d.EndpointID, d.By, ByOperator, ByPartner)
	}
	var at *time.Time
	if !d.At.IsZero() {
		at = &d.At
	}
	var since *time.Time
	err = tx.QueryRow(ctx, `UPDATE endpoint SET status = 'disabled', disabled_reason = $3, version = version + 1,
			updated_at = coalesce($4::timestamptz, now())
		WHERE id = $1 AND partner_id = $2 AND status = 'active' RETURNING failing_since`,
		d.EndpointID, d.PartnerID, d.Reason, at).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("endpoints: disable %s: %w", d.EndpointID, err)
	}
	data := Disabled{EndpointID: d.EndpointID, Reason: d.Reason, DisabledBy: d.By}
	if since != nil {
		utc := since.UTC()
		data.FailingSince = &utc
	}
	b, err := json.Marshal(data)
	if err != nil {
		return false, fmt.Errorf("endpoints: disable %s: %w", d.EndpointID, err)
	}
	subject := outbox.Subject{Type: "endpoint", ID: d.EndpointID}
	events := []outbox.Event{{PartnerID: d.PartnerID, Type: DisabledEventType, Subject: subject, Data: b}}
	// The operator hears of every disabling too (design.md section 8, "Operator events"); the
	// operator's own endpoints have no partner to tell.
	op, err := json.Marshal(OperatorDisabled{PartnerID: d.PartnerID, Disabled: data})
	if err != nil {
		return false, fmt.Errorf("endpoints: disable %s: %w", d.EndpointID, err)
	}
	opEvent := outbox.Event{PartnerID: outbox.OperatorPartnerID, Type: OperatorDisabledEventType, Subject: subject, Data: op}
	if d.PartnerID == outbox.OperatorPartnerID {
		events = events[:0]
	}
	if _, err := outbox.AppendAll(ctx, tx, append(events, opEvent)); err != nil {
		return false, fmt.Errorf("endpoints: disable %s: %w", d.EndpointID, err)
	}
	return true, nil
}

// OperatorDisabledEventType is the operator's event of a disabled endpoint, written with every
// endpoint.disabled (eventcatalog.OperatorEndpointDisabled).
const OperatorDisabledEventType = "operator.endpoint.disabled"

// OperatorDisabled is the data of an operator.endpoint.disabled event: the partner's event's
// data and the partner it was about.
type OperatorDisabled struct {
	PartnerID string `json:"partner_id"`
	Disabled
}
