-- Attempt latency in microseconds (design.md sections 4 and 5): whole milliseconds show every
-- attempt to a receiver on the same host as 0. The recorder writes these beside latency_ms and
-- last_latency_ms, which stay for the readers that know only them. Null in rows recorded before
-- this migration (their latency is known to the millisecond only) and in deliveries with no
-- attempt yet. Nullable without a default, so adding them rewrites no table.
ALTER TABLE delivery ADD COLUMN last_latency_us bigint;
ALTER TABLE delivery_attempt ADD COLUMN latency_us bigint;
