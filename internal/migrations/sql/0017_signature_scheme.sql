-- Asymmetric signatures (design.md section 7, R15-R17): an endpoint signs with v1 (HMAC-SHA256
-- under a whsec_ secret shared with the receiver, as before) or v1a (ed25519 under a whsk_
-- signing key only hookstream holds; the receiver verifies with its whpk_ public key).
-- signature_scheme is the scheme of the keys the endpoint gets from now on (creation, rotation);
-- the keys already made keep signing until their rotation overlap ends, so a change of scheme is
-- a rotation. A v1a key's private half is sealed in secret_ciphertext like any secret (R16); its
-- public half is no secret and is stored in the clear for the API to show. Adding a column with
-- a constant default rewrites no row.
ALTER TABLE endpoint ADD COLUMN signature_scheme text NOT NULL DEFAULT 'v1'
    CHECK (signature_scheme IN ('v1', 'v1a'));
ALTER TABLE endpoint_secret ADD COLUMN public_key text
    CHECK (public_key IS NULL OR public_key LIKE 'whpk\_%');
