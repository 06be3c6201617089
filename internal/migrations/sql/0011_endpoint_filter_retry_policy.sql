-- An endpoint's payload filter (R13) (internal/filter; NULL: every event of
-- its subscribed types) and its retry policy (R22; internal/retrypolicy, the admin API's JSON shape;
-- NULL: the deployment's schedule and 4xx policy). The admin API validates both; the checks
-- here only keep the row within what cdc carries to the endpoints topic.
ALTER TABLE endpoint ADD COLUMN filter text CHECK (filter IS NULL OR length(filter) BETWEEN 1 AND 2048);
ALTER TABLE endpoint ADD COLUMN retry_policy jsonb CHECK (retry_policy IS NULL OR jsonb_typeof(retry_policy) = 'object');
