-- The failure window (R23, design.md section 8): when the endpoint.failing warning was sent for
-- the endpoint's current failing period. A new period (failing_since set again after a success)
-- is warned anew.
ALTER TABLE endpoint ADD COLUMN failing_warned_at timestamptz;
