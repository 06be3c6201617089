-- max_in_flight becomes the ceiling of the sender's adaptive per-endpoint concurrency (design.md
-- section 7): the sender starts an endpoint at 8 requests in flight and raises it while the
-- endpoint answers fast, up to this value. New endpoints get a ceiling of 64; existing rows keep
-- the value they have (an explicit 8 cannot be told from the old default), and a PATCH raises it.
ALTER TABLE endpoint ALTER COLUMN max_in_flight SET DEFAULT 64;
