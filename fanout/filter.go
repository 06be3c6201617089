package fanout

import "github.com/hookstream/hookstream/internal/filter"

// filterDocs decodes an event's envelope for payload filters at most once per schema version,
// and only when an endpoint with a filter receives it; decoding reads its numbers, so every
// endpoint's filter compares them without parsing again.
type filterDocs map[int]*filter.Document

// match evaluates flt against body, the envelope of version schemaVersion the endpoint would
// receive. A body that is no JSON object (readEvent has already refused those) matches no
// filter: a filter is a promise of what the endpoint receives.
func (d *filterDocs) match(flt *filter.Filter, schemaVersion int, body []byte) bool {
	if *d == nil {
		*d = filterDocs{}
	}
	doc, ok := (*d)[schemaVersion]
	if !ok {
		if decoded, err := filter.Decode(body); err == nil {
			doc = &decoded
		}
		(*d)[schemaVersion] = doc
	}
	return doc != nil && flt.Match(*doc)
}
