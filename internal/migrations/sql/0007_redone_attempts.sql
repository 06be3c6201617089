-- A delivery done again after a sender or broker failure (the work since the last committed
-- offset is redone, with the attempt number it had) is a second request under the same attempt
-- number. It gets its own row, told apart by its start time, where before it was dropped as a
-- copy of the first and the history missed a request the receiver saw. The same attempt record
-- read twice by the recorder still leaves one row.
ALTER TABLE delivery_attempt DROP CONSTRAINT delivery_attempt_pkey;
ALTER TABLE delivery_attempt ADD PRIMARY KEY (delivery_id, attempt_no, started_at);

-- The delivery row follows its newest request: the highest attempt number, and of the requests
-- with that number the one that started last.
ALTER TABLE delivery ADD COLUMN last_attempt_at timestamptz;
UPDATE delivery d SET last_attempt_at = a.started_at
    FROM (SELECT DISTINCT ON (delivery_id) delivery_id, started_at FROM delivery_attempt
          ORDER BY delivery_id, attempt_no DESC, started_at DESC) a
    WHERE a.delivery_id = d.delivery_id;
