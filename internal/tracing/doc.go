// Package tracing carries one event's W3C trace context from the platform's transaction to the
// partner's request, and makes one OpenTelemetry span per hop: cdc publishing the outbox row,
// fanout making each delivery, every attempt of the sender, every release of a retry tier, and
// the recorder storing each attempt. The context travels in the outbox_event.traceparent column
// and then in the records.HeaderTraceparent header of each Kafka record; the sender puts it in
// the traceparent header of the request.
//
// Tracing is off unless a process is given a TracerProvider: a nil *Tracer is the off state, and
// every method on it returns at once without reading a header, allocating or exporting. Span
// attributes are identifiers and numbers only (event, delivery, endpoint and partner ids,
// attempt number, trigger, status, error category): never a secret, a URL, a header or a byte of
// payload.
package tracing
