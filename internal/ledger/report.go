package ledger

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Report is what Check found. The must-be-zero counts are listed by Failures.
type Report struct {
	Events, Endpoints    int
	Deliveries, Attempts int // history rows of the window's events
	Requests, Accepted   int // receipts read, and those answered 2xx
	// Pairs counts the (event, endpoint) pairs by their place in the expected set: required,
	// excused, and the others that showed up in the history or the receipts.
	Pairs map[string]int

	// Must be zero.
	Missing           int
	Foreign           int
	BadSignatures     int
	WebhookIDMismatch int
	UnknownEvents     int
	NotSubscribed     int
	AbsentFromHistory int
	Contradictions    int

	// MissingByState breaks Missing down by the pair's delivery state ("none": no row).
	MissingByState map[string]int
	// Duplicates counts acceptances of a pair after its first, by cause (see doc.go).
	Duplicates        int
	DuplicatesByCause map[string]int
	// DuplicatesByKill splits the duplicates of cause kill by the kind of what was down
	// between the two requests: an outage's kind (Options.Outages) first, else a kill's.
	DuplicatesByKill map[string]int
	// Unrecorded counts requests seen by a receiver that match no attempt; UnrecordedAtKill
	// those of them within the request timeout before to 30 s after a known kill.
	Unrecorded, UnrecordedAtKill int
	UnrecordedByOutage           map[string]int // UnrecordedAtKill by the kind of the outage
	// UnrecordedRepeats are those that came after an attempt of their pair the history has: a
	// redelivery whose record the recorder dropped as a repeat of that attempt's number.
	UnrecordedRepeats int
	MaxUnrecorded     int // negative: no bound

	// Reported, not failures.
	OutcomeDisagreements int // a receipt matched to an attempt that recorded another status
	SentBeforeCreation   int // pairs of events older than their endpoint with a request
	SentAfterDisable     int // pairs of events after their endpoint's disable with a request
	UnknownEndpoints     int // history rows or receipts naming an endpoint that does not exist (deleted)
	DuplicateEventIDs    int // outbox rows sharing an event id with an earlier one
	Refused              int // outbox rows cdc refused (outbox_dead_letter): never published, expected nowhere

	examples map[string][]string
}

func newReport(o Options) *Report {
	return &Report{Pairs: map[string]int{}, MissingByState: map[string]int{}, DuplicatesByCause: map[string]int{}, DuplicatesByKill: map[string]int{}, UnrecordedByOutage: map[string]int{},
		MaxUnrecorded: o.MaxUnrecorded, examples: map[string][]string{}}
}

// count adds one to *n and keeps the first few examples under name.
func (r *Report) count(n *int, name, format string, args ...any) {
	*n++
	if len(r.examples[name]) < 3 {
		r.examples[name] = append(r.examples[name], fmt.Sprintf(format, args...))
	}
}

// mustBeZero lists the must-be-zero counts with their names, in report order.
func (r *Report) mustBeZero() []struct {
	name string
	n    int
} {
	return []struct {
		name string
		n    int
	}{
		{"missing", r.Missing}, {"foreign partner", r.Foreign}, {"bad signatures", r.BadSignatures},
		{"webhook-id not the event id", r.WebhookIDMismatch}, {"unknown events", r.UnknownEvents},
		{"delivered without a subscription", r.NotSubscribed}, {"received, absent from the history", r.AbsentFromHistory},
		{"contradicting final states", r.Contradictions},
	}
}

// Failures describes every must-be-zero count that is not zero, with examples, and the
// unrecorded requests when they exceed their bound. None: the ledger holds.
func (r *Report) Failures() []string {
	var out []string
	for _, c := range r.mustBeZero() {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%s: %d (e.g. %s)", c.name, c.n, strings.Join(r.examples[c.name], "; ")))
		}
	}
	if r.MaxUnrecorded >= 0 && r.Unrecorded > r.MaxUnrecorded {
		out = append(out, fmt.Sprintf("requests absent from the history: %d, more than the bound %d", r.Unrecorded, r.MaxUnrecorded))
	}
	return out
}

// Print writes the report as aligned lines.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "events %d, endpoints %d, pairs %s\n", r.Events, r.Endpoints, formatCounts(r.Pairs))
	fmt.Fprintf(w, "history: %d deliveries, %d attempts; receipts: %d requests, %d accepted\n", r.Deliveries, r.Attempts, r.Requests, r.Accepted)
	for _, c := range r.mustBeZero() {
		mark := "ok"
		if c.n > 0 {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %-36s %8d  %s\n", c.name, c.n, mark)
		for _, ex := range r.examples[c.name] {
			fmt.Fprintf(w, "      e.g. %s\n", ex)
		}
	}
	if r.Missing > 0 {
		fmt.Fprintf(w, "  missing by delivery state: %s\n", formatCounts(r.MissingByState))
	}
	bound := "no bound"
	if r.MaxUnrecorded >= 0 {
		bound = fmt.Sprintf("bound %d", r.MaxUnrecorded)
	}
	fmt.Fprintf(w, "  %-36s %8d  (%d within an outage's window: %s; %d after a recorded attempt of their pair; %s)\n",
		"requests absent from the history", r.Unrecorded, r.UnrecordedAtKill, formatCounts(r.UnrecordedByOutage), r.UnrecordedRepeats, bound)
	for _, ex := range r.examples["requests absent from the history"] {
		fmt.Fprintf(w, "      e.g. %s\n", ex)
	}
	fmt.Fprintf(w, "  %-36s %8d  %s\n", "duplicates", r.Duplicates, formatCounts(r.DuplicatesByCause))
	if len(r.DuplicatesByKill) > 0 {
		fmt.Fprintf(w, "  %-36s %8s  %s\n", "duplicates after a kill, by kind", "", formatCounts(r.DuplicatesByKill))
	}
	fmt.Fprintf(w, "  reported only: %d receipts whose attempt recorded another status, %d pairs sent before their endpoint existed, "+
		"%d after its disable, %d rows or receipts of deleted endpoints, %d repeated event ids, "+
		"%d outbox rows cdc refused (GET /v1/outbox/dead-letters)\n",
		r.OutcomeDisagreements, r.SentBeforeCreation, r.SentAfterDisable, r.UnknownEndpoints, r.DuplicateEventIDs, r.Refused)
}

// formatCounts prints a map of counts as "a 1, b 2" in key order; "none" when empty.
func formatCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
