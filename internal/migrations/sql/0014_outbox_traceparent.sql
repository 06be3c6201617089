-- The W3C trace context of the platform's transaction (design.md section 14): an optional traceparent the
-- writer stores with the event (outbox.WithTraceparent, outbox.WithSpanContext), which cdc, when
-- tracing is on, makes the parent of the event's trace, carried in the records' traceparent
-- header through every hop to the partner's request. NULL: no trace context; cdc starts a new
-- trace. Version 00 of the format is 55 characters; later versions may be longer, so only a
-- generous bound is checked here (the writer checks the format; cdc ignores one it cannot read).
-- Adding a nullable column without a default rewrites no partition, and the publication (every
-- column of the table) carries it with the row.
ALTER TABLE outbox_event ADD COLUMN traceparent text
    CONSTRAINT outbox_event_traceparent_length CHECK (char_length(traceparent) <= 512);
