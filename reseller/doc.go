// Package reseller is the reference control plane of an AI API reseller, the platform hookstream
// is built for, written as an example a platform team copies (R34). It keeps customers, their API
// keys (only a hash and a short prefix are stored; the key is shown once), prepaid balances with
// a ledger of credits and adjustments, budgets and finalized usage, every row scoped to one of
// hookstream's partners, and serves them over HTTP to the partner's API keys of hookstream's
// admin API (partnerkeys.Verify, so the platform imports nothing of the admin server).
//
// Guarantees:
//   - Every state change and its events commit in one transaction through outbox.Writer with the
//     event catalog (R9): a change that fails writes no event, and an event the catalog refuses
//     rolls the change back.
//   - Every state read carries a version that increases with each change of the resource, so a
//     receiver can apply "newer version wins" (R30).
//   - budget.threshold_crossed and balance.low follow one crossing rule (Crossings, BalanceLow;
//     R5), decided on exact decimals (Decimal; R7) under the row lock of the budget or customer,
//     so concurrent usage neither loses nor doubles a crossing.
//   - The export lists finalized usage and ledger entries of a time range, cursor-paged, in JSON
//     or CSV, from the snapshot its first page saw: rows committed while a partner pages through
//     appear in a later export, never halfway through this one.
//
// The tables live in the PostgreSQL schema "reseller" (migration 0013), apart from hookstream's.
package reseller
