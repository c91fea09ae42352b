// Package strictjson decodes JSON strictly and says where it is wrong: an
// unknown member or a value of the wrong type is reported with its path
// (`agents[1].modle`, `message.parts[0].text`) and, for a misspelt member,
// the closest known name. So is what encoding/json lets pass but I-JSON
// (RFC 7493) does not: a member name given twice in one object
// (`message.parts[0].type: duplicate member name`), and a string that is
// not Unicode text (`text: invalid UTF-8`, `lone surrogate \ud800`).
// Member names are case-sensitive: where encoding/json would take "TEXT"
// for the field "text", strictjson reports an unknown field. The
// configuration and the REST API share it so that both report mistakes
// the same way.
//
// Imports: none.
package strictjson
