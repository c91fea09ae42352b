// Package agentd holds files that ship inside the binary: the OpenAPI
// description of the REST API.
package agentd

import _ "embed"

// OpenAPI is openapi.yaml, served at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
