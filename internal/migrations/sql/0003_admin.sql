-- The admin API (R36, design.md section 10).

-- Replay jobs are leased by the admin process running them, so several admin processes can share
-- the queue and a job whose process died is resumed by another once its lease runs out (R24).
ALTER TABLE replay_job
    ADD COLUMN lease_owner  text,
    ADD COLUMN lease_until  timestamptz,
    ADD COLUMN requested_by text NOT NULL DEFAULT '',
    ADD COLUMN started_at   timestamptz,
    ADD COLUMN finished_at  timestamptz;

-- The highest attempt number handed to a manual replay of each delivery. Replays take their
-- numbers under this row's lock, so two replays never share a number, and a number handed out
-- but not yet recorded in delivery_attempt tells the next replay that an attempt is in flight.
CREATE TABLE replay_reservation (
    delivery_id  text PRIMARY KEY,
    attempt_no   integer NOT NULL CHECK (attempt_no >= 0),
    reserved_at  timestamptz NOT NULL DEFAULT now()
);
