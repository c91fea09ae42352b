// Package limits bounds what one tenant, and all of them together, may
// ask of the server at its HTTP edge: a request rate per tenant (token
// bucket), active runs per tenant, open event streams per tenant and per
// server, and the shape of request bodies (size, JSON nesting, parts per
// message).
//
// Middleware runs after authentication, so the tenant in the request's
// context (run.TenantFrom) is the caller's. A refusal is answered in the
// route's own error format (auth.Refusal): 429 with Retry-After for a
// tenant over its rate, runs or streams, 503 with Retry-After when the
// server holds its maximum of streams, 413 for an oversized body and 400
// for one nested too deep or carrying too many parts.
//
// Which requests start runs or open streams is read from the route — and,
// for A2A JSON-RPC and MCP (tools/call), from the method in the body, which Middleware reads
// (bounded) and hands on unchanged. The edge reads requests as the faces
// do, or a spelling the faces accept would slip past it: ?stream= as
// strconv.ParseBool, JSON keys ("method", "parts") unescaped and matched
// case-insensitively as encoding/json matches struct fields, the method
// from the first JSON value only (the JSON-RPC servers decode one).
//
// Active runs are counted in the store (runs of the tenant that are
// submitted or working), so the limit holds across replicas; streams are
// counted in this process.
//
// Imports: auth (for refusals), run (the tenant and the run query). It
// must not import api, a2a or runtime.
package limits
