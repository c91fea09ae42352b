// Package jsonscan checks JSON text in place, without decoding it and
// without allocating: Valid answers what json.Valid answers, several times
// faster, and Compact whether bytes are exactly what json.Marshal makes of
// them as a json.RawMessage, so that they can be spliced into
// encoding/json-shaped output unchanged.
//
// memstore checks the raw JSON it is given (event data a writer does not
// vouch for, message and checkpoint fields), the runtime every step payload
// it splices into an event, and the engine every step detail it encodes by
// hand; encoding/json's table-driven scanner was among the largest single
// costs of a run. jsonscan imports only the standard library; it must not
// import anything of agentd's.
package jsonscan
