-- Per-endpoint request options (design.md section 7): custom request headers, authentication to the
-- receiver (a static header secret, HTTP basic, OAuth 2.0 client credentials), a client
-- certificate for mTLS, and the named egress proxy. One jsonb document in the shape of
-- records.RequestOptions, so cdc carries it to the endpoints topic as it is. Its secrets (the
-- header value, the password, the client secret, the private key) are sealed with AES-256-GCM
-- under the processes' key like signing secrets (R16), bound to the endpoint by their AAD; the
-- document never holds them in the clear. NOT NULL, so an unchanged TOAST value in the WAL can
-- never be mistaken for a cleared one.
ALTER TABLE endpoint ADD COLUMN request_options jsonb NOT NULL DEFAULT '{}'::jsonb;
