// Package jsonscan checks JSON in place, without decoding it and without
// allocating: Valid answers what json.Valid answers, several times faster;
// Compact whether bytes are exactly what json.Marshal makes of them as a
// json.RawMessage; Flat whether a map of decoded JSON comes back unchanged
// from an encoding/json round trip (so a shallow copy is a deep one).
//
// memstore checks the raw JSON it is given with it (event data a writer
// does not vouch for, message and checkpoint fields), and it and the
// runtime copy flat metadata maps without a round trip. jsonscan imports
// only the standard library; it must not import anything of agentd's.
package jsonscan
