package agentproto

import (
	"encoding/json"

	"agentd/internal/model"
)

// The keys under which a run's metadata records the body's context and
// configurable (its kwargs, as LangGraph servers answer them).
const (
	metaContext      = "agentd.context"
	metaConfigurable = "agentd.configurable"
)

// toolChoiceKey is the user message metadata key a loop agent reads one
// request's tool choice from (engine/loop MetaToolChoice).
const toolChoiceKey = "tool_choice"

// runConfig is what a run's config and context say that agentd applies:
//
//	config.configurable.tool_choice, context.tool_choice → the request's tool choice
//	config.configurable.checkpoint_id                     → checkpoint_id (a fork)
//	context, config.configurable                          → recorded in the run's metadata
//
// Everything else (tags, run_name, recursion_limit, max_concurrency, the
// rest of configurable) is accepted and ignored: an agent's model, tools
// and limits are its configuration's.
type runConfig struct {
	toolChoice   string
	checkpointID string
	configurable map[string]any
	context      map[string]any
}

// parseConfig reads b.Config and b.Context.
func (b *runBody) parseConfig() (runConfig, error) {
	var rc runConfig
	if nonEmpty(b.Config) {
		var cfg struct {
			Configurable map[string]any `json:"configurable"`
		}
		if err := json.Unmarshal(b.Config, &cfg); err != nil {
			return rc, badInput("config", "want an object such as {\"configurable\": {…}}")
		}
		rc.configurable = cfg.Configurable
	}
	if nonEmpty(b.Context) {
		if err := json.Unmarshal(b.Context, &rc.context); err != nil || rc.context == nil {
			return rc, badInput("context", "want an object")
		}
	}
	var err error
	if rc.toolChoice, err = stringField(rc.configurable, "config.configurable", toolChoiceKey); err != nil {
		return rc, err
	}
	if rc.toolChoice == "" {
		if rc.toolChoice, err = stringField(rc.context, "context", toolChoiceKey); err != nil {
			return rc, err
		}
	}
	rc.checkpointID, err = stringField(rc.configurable, "config.configurable", "checkpoint_id")
	return rc, err
}

// stringField is m[key] when it is a string, "" when absent.
func stringField(m map[string]any, at, key string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badInput(at+"."+key, "want a string, got %s", jsonKind(v))
	}
	return s, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "another value"
}

// apply sets the tool choice on msg, the user's message (the agent checks
// it: a tool it lacks fails the run), and records context and
// configurable in the run's metadata md.
func (rc runConfig) apply(msg model.Message, md map[string]any) model.Message {
	if rc.context != nil {
		md[metaContext] = rc.context
	}
	if rc.configurable != nil {
		md[metaConfigurable] = rc.configurable
	}
	if rc.toolChoice == "" {
		return msg
	}
	meta := make(map[string]any, len(msg.Metadata)+1)
	for k, v := range msg.Metadata {
		meta[k] = v
	}
	meta[toolChoiceKey] = rc.toolChoice
	msg.Metadata = meta
	return msg
}
