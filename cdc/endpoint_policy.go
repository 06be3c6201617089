package cdc

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/retrypolicy"
)

// filterAndPolicyFromRow fills the endpoint's payload filter and retry policy (migration 0011)
// from its row: NULL clears them, an unchanged TOAST value (a long filter or policy) keeps e's.
func filterAndPolicyFromRow(rels *relations, rw row, e *records.Endpoint) error {
	if c, ok := rw["filter"]; !ok || !c.unchanged {
		var f pgtype.Text
		if _, err := rels.scan(rw, "filter", &f); err != nil {
			return err
		}
		e.Filter = f.String
	}
	if c, ok := rw["retry_policy"]; !ok || !c.unchanged {
		var raw []byte
		if _, err := rels.scan(rw, "retry_policy", &raw); err != nil {
			return err
		}
		e.RetryPolicy = nil
		if raw != nil {
			var p retrypolicy.Policy
			if err := json.Unmarshal(raw, &p); err != nil {
				return fmt.Errorf("cdc: endpoint %s: retry_policy: %w", e.ID, err)
			}
			e.RetryPolicy = &p
		}
	}
	return nil
}
