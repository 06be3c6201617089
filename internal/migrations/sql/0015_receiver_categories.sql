-- Error categories for failures the receiver or the endpoint's state caused, which were recorded
-- as internal (hookstream's own fault) before (design.md section 7, R19): connection_reset (the
-- receiver reset or closed the connection before answering), invalid_response (an answer that is
-- not HTTP, or headers past the limit) and endpoint_disabled (not sent: the endpoint was disabled
-- by the time the attempt was due). Changing a CHECK rewrites nothing; existing rows keep theirs.
ALTER TABLE delivery_attempt DROP CONSTRAINT delivery_attempt_error_category_check;
ALTER TABLE delivery_attempt ADD CONSTRAINT delivery_attempt_error_category_check CHECK (error_category IN (
    'dns', 'connection_refused', 'connection_reset', 'tls', 'timeout', 'http_status', 'invalid_response',
    'redirect', 'blocked_destination', 'endpoint_disabled', 'tenant_mismatch', 'internal'));
