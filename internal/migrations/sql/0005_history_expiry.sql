-- Delivery history expires (R33): the recorder deletes finished deliveries, with their attempts,
-- once they are older than the history retention. Live ones (pending, retrying) never expire.
CREATE INDEX delivery_expiry_idx ON delivery (updated_at)
    WHERE state IN ('succeeded', 'failed', 'skipped');
