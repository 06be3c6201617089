-- The operator's reserved partner (design.md section 8, "Operator events"): operator endpoints
-- and operator events belong to it, so they travel the pipeline like any partner's. Its id is
-- outside the pattern of real partner ids, so the admin API can never create it or a partner
-- named like it; the check admits this one id beside the pattern.
ALTER TABLE partner DROP CONSTRAINT partner_id_check;
ALTER TABLE partner ADD CONSTRAINT partner_id_check
    CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$' OR id = 'hookstream:operator');
INSERT INTO partner (id, name) VALUES ('hookstream:operator', 'platform operator (reserved)')
    ON CONFLICT (id) DO NOTHING;

-- Nobody authenticates as the operator's partner: the operator has its own token.
ALTER TABLE partner_api_key ADD CONSTRAINT partner_api_key_not_operator
    CHECK (partner_id <> 'hookstream:operator');
