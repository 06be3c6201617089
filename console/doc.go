// Package console is hookstream's web console for partners and operators (R39), served by
// `hookstream admin` and `hookstream dev` under /console.
//
// It is a client of the public admin API and nothing else: every page is built from admin API
// calls made with the signed-in user's own credential (a partner API key or the operator token),
// through the API's own http.Handler in the same process, so the API's authentication, partner
// scope, quotas and validation apply to the console exactly as to curl. The console never widens
// scope: a partner's session asking for another partner's endpoint gets the API's 404, an
// operator page the API's 403.
//
// Guarantees:
//   - Sessions live in the memory of the admin process (bounded, absolute lifetime, revoked by
//     sign-out); the browser holds only a random session id in an HttpOnly, Secure,
//     SameSite=Strict cookie scoped to /console. The credential never reaches the browser again
//     and is never logged.
//   - Every write is a POST carrying the session's CSRF token (sign-in: a double-submit token);
//     a POST without it changes nothing and answers 403. Cross-origin POSTs are refused as well
//     (net/http's CrossOriginProtection).
//   - Every answer carries a Content-Security-Policy without 'unsafe-inline': scripts and styles
//     come only from the embedded files under /console/static/, which are compiled into the
//     binary (no CDN, nothing fetched at run time).
//   - A secret (endpoint creation, rotation) is shown once, on the page right after the action,
//     and then forgotten by the console as the API forgets it. A secret typed into the endpoint
//     form (authentication, a client certificate's key) is write-only: sent to the API, never
//     written into a page again.
//   - The endpoint form sets everything the API sets on an endpoint and validates nothing itself:
//     the API's refusals come back per field and are shown beside the fields they name.
package console
