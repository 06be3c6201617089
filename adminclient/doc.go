// Package adminclient is a Go client for hookstream's admin API (design.md section 10): partners
// and API keys, endpoints, secrets and rotation, delivery history, replays, test events, the
// event feed, the catalog and the limits.
//
// For platform teams: openapi.gen.go is generated from admin/openapi.json, the same document the
// server's routes are tested against and serve at GET /v1/openapi.json, so every operation,
// parameter and body of the API has a typed method and struct here; nothing is written by hand
// but New and Check. The committed code is tested to be exactly what the generator makes of the
// current document (go generate ./adminclient regenerates it).
//
//	c, err := adminclient.New("http://127.0.0.1:8080", token) // the operator token or a partner API key
//	res, err := c.CreateEndpointWithResponse(ctx, "acme", adminclient.EndpointCreate{
//		URL: "https://example.com/hooks", EventTypes: []string{"customer.*"}})
//	if err := adminclient.Check(res, err); err != nil {
//		return err // an *adminclient.APIError for a refusal: its status and error body
//	}
//	secret := res.JSON201.Secret // shown only in this response
//
// Every operation has two methods: Op returns the bare *http.Response, OpWithResponse the
// response decoded by status (JSON201, ApplicationProblemJSON404, …). Check turns a response that is not 2xx into
// an *APIError carrying the API's problem (RFC 9457): its code (ProblemCode…), detail, the field that failed, the request id, the egress rule that
// refused a URL, and the quota reached with its limit and usage.
package adminclient
