package outbox

// OperatorPartnerID is the reserved partner of the platform operator's own events (the
// operator.* types of the event catalog, design.md section 8, "Operator events"). Operator
// endpoints are endpoints of this partner, so operator events travel the outbox, cdc, fanout,
// the sender and the recorder like any partner's, and fanout's rule (an event reaches only the
// endpoints of its partner, R13) keeps them from every real partner.
//
// No real partner can have it or authenticate as it: the ':' is outside the partner id pattern
// the admin API accepts, migration 0020 lets the partner table hold this one id beside that
// pattern and refuses an API key for it. The event catalog refuses an operator type under any
// other partner and any other type under this one.
const OperatorPartnerID = "hookstream:operator"
