-- Strict order (design.md section 7): an ordered endpoint whose failing head is held until it is
-- delivered or its retry schedule is exhausted, with no time limit. Only an ordered endpoint can
-- be strict.
ALTER TABLE endpoint ADD COLUMN strict_order boolean NOT NULL DEFAULT false;
ALTER TABLE endpoint ADD CONSTRAINT endpoint_strict_order_check CHECK (ordered OR NOT strict_order);

-- The attempt at which a strict endpoint's order gave way: its head failed for good and the
-- records held behind it went on (the history shows it, R18).
ALTER TABLE delivery_attempt ADD COLUMN order_broken boolean NOT NULL DEFAULT false;

-- An ordered endpoint's hold, as the newest attempt stating one left it (the sender reaches no
-- database; the recorder keeps it as it keeps the circuit): the records held behind the head,
-- since when the head is held (null: none held), and when the sender stated it.
ALTER TABLE endpoint_health
    ADD COLUMN order_held integer,
    ADD COLUMN order_head_since timestamptz,
    ADD COLUMN order_at timestamptz;
