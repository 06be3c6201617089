package admin

// Ordering of an endpoint's deliveries (design.md section 7): none, bounded (ordered, the
// sender's maximum hold) or strict (ordered, held until delivered or dead-lettered). The
// ordered field stays: ordered is true for bounded and strict.

const (
	orderingNone    = "none"
	orderingBounded = "bounded"
	orderingStrict  = "strict"
)

// orderingOf names the mode of an endpoint's two columns.
func orderingOf(ordered, strict bool) string {
	switch {
	case strict:
		return orderingStrict
	case ordered:
		return orderingBounded
	}
	return orderingNone
}

// ordering checks a requested mode and returns its columns; ordered, when the request gives it
// too, must agree.
func (p *problems) ordering(mode string, ordered *bool) (isOrdered, strict bool) {
	switch mode {
	case orderingNone:
	case orderingBounded:
		isOrdered = true
	case orderingStrict:
		isOrdered, strict = true, true
	default:
		p.add("ordering", "must be %q, %q or %q", orderingNone, orderingBounded, orderingStrict)
		return false, false
	}
	if ordered != nil && *ordered != isOrdered {
		p.add("ordering", "%q contradicts ordered %t: give one of them, or both agreeing", mode, *ordered)
	}
	return isOrdered, strict
}

// createOrdering is the ordering of a new endpoint: ordering when given, else ordered (bounded).
func (p *problems) createOrdering(req *createEndpointRequest) (ordered, strict bool) {
	if req.Ordering == nil {
		return req.Ordered != nil && *req.Ordered, false
	}
	return p.ordering(*req.Ordering, req.Ordered)
}

// patchOrdering checks what a PATCH says of the ordering: ordering (null: none) sets both
// columns; ordered alone keeps a strict endpoint strict when true and ends strict order with
// the order when false.
func (p *problems) patchOrdering(req *patchEndpointRequest, c *endpointPatch) {
	var ordered *bool
	if req.Ordered.Set {
		ordered = new(bool) // null: not ordered
		if !req.Ordered.Null {
			ordered = &req.Ordered.Value
		}
	}
	c.ordered = ordered
	if !req.Ordering.Set {
		if ordered != nil && !*ordered {
			c.strict = new(bool)
		}
		return
	}
	mode := orderingNone
	if !req.Ordering.Null {
		mode = req.Ordering.Value
	}
	o, s := p.ordering(mode, ordered)
	c.ordered, c.strict = &o, &s
}
