package ledger

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Receipt is what a receiver recorded of one request, one JSON object per line in a receipts
// file.
type Receipt struct {
	// EventID is the envelope's event_id, read from the body.
	EventID string `json:"event_id"`
	// EndpointID is the endpoint the request's path belongs to.
	EndpointID string `json:"endpoint_id"`
	// PartnerID is the partner the request's path belongs to.
	PartnerID string `json:"partner_id"`
	// WebhookID is the webhook-id header.
	WebhookID  string    `json:"webhook_id"`
	ReceivedAt time.Time `json:"received_at"`
	// Verified says whether the webhook-signature verified with the endpoint's secret.
	Verified bool `json:"verified"`
	// Status is the receiver's answer; 0 when it gave none (it held the request until the
	// sender gave up).
	Status int `json:"status"`
	// Type is the envelope's type, optional: webhook.test requests have no outbox row.
	Type string `json:"type,omitempty"`
}

// Accepted says whether the receiver durably accepted the request (R3): a verified signature and a 2xx.
func (r Receipt) Accepted() bool { return r.Verified && r.Status >= 200 && r.Status < 300 }

// ReadReceipts reads a receipts file: JSON lines, blank lines skipped.
func ReadReceipts(r io.Reader) ([]Receipt, error) {
	out := []Receipt{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rc Receipt
		if err := json.Unmarshal(b, &rc); err != nil {
			return nil, fmt.Errorf("receipts line %d: %w", line, err)
		}
		if rc.EndpointID == "" || rc.ReceivedAt.IsZero() {
			return nil, fmt.Errorf("receipts line %d: endpoint_id and received_at are required", line)
		}
		out = append(out, rc)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("receipts: %w", err)
	}
	return out, nil
}
