// Package auth authenticates HTTP callers and says what they may do.
//
// A caller presents an API key (Authorization: Bearer <key>, or the
// X-API-Key header) or a JWT (Authorization: Bearer <jwt>). Either maps to
// a Principal: a name, a tenant and a set of scopes (agents:read,
// runs:read, runs:write, admin). Middleware puts the Principal and its
// tenant (run.WithTenant) into the request's context, so every store
// query the request makes is scoped to the caller's tenant, and refuses
// what the caller may not do: 401 with WWW-Authenticate when it is not
// authenticated, 403 when its scopes do not cover the route (RFC 9110,
// RFC 6750) — in the route's own error format (problem details for the
// REST API, JSON-RPC or HTTP+JSON errors for A2A).
//
// Invariants:
//   - API keys are held only as SHA-256 digests and compared in constant
//     time against every configured digest; neither keys nor tokens are
//     ever logged or echoed in an answer.
//   - JWTs are verified with the standard library: HS256 with a shared
//     secret, RS256 and ES256 with keys from a JWKS document. The key's
//     type decides the algorithm a token may use (no "none", no HS256 with
//     a public key); issuer, audience and expiry are always checked.
//   - The JWKS is cached, refreshed when stale and refetched on an unknown
//     key id at most once per MinRefetch, so rotation works and a flood of
//     forged key ids cannot hammer the issuer.
//
// Imports: run (for the tenant context). auth imports nothing of api, a2a
// or runtime: the faces consume it, it consumes none of them.
package auth
