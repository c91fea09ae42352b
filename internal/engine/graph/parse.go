package graph

import (
	"bytes"
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"agentd/internal/strictjson"
)

// Parse reads one workflow document, YAML or JSON, and checks it against
// the spec: the schema layer (schema.json), then every validator rule of
// spec §11, with CEL expressions compiled. It touches no file: @
// references, contextFiles and includes are checked by Load. The error is
// Problems, every problem found, each with its path.
func Parse(data []byte) (*Workflow, error) {
	var ps problems
	w := parse(data, &ps)
	if w != nil {
		w.check(&ps)
	}
	return w, ps.err()
}

// parse decodes data, reporting schema violations; it returns nil when
// the document cannot be decoded into a Workflow at all.
func parse(data []byte, ps *problems) *Workflow {
	if len(data) > MaxFileSizeBytes {
		ps.add("", CodeTooLarge, "document is %d bytes, more than the %d allowed", len(data), MaxFileSizeBytes)
		return nil
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		ps.add("", CodeValidation, "not valid YAML or JSON: %v", err)
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		ps.add("", CodeValidation, "not valid JSON: %v", err)
		return nil
	}
	if _, ok := doc.(map[string]any); !ok {
		ps.add("", CodeValidation, "a workflow is a mapping with name and steps, got %s", bytes.TrimSpace(j))
		return nil
	}
	bad := checkSchema(doc, ps)
	// strictjson, not encoding/json: keys are matched case-sensitively,
	// so a stray "dependson" cannot stand in for dependsOn.
	// When the schema already found problems, the values at fault are
	// pruned so that the validator rules still run: one run lists every
	// problem.
	if len(bad) > 0 {
		prune(doc, bad)
		if j, err = json.Marshal(doc); err != nil {
			return nil
		}
	}
	var w Workflow
	if err := strictjson.Decode(j, &w); err != nil {
		if len(ps.list) == 0 {
			ps.add("", CodeValidation, "%v", err)
		}
		return nil
	}
	return &w
}
