package loop

import "encoding/json"

// ResponseSchema returns the JSON Schema final answers must match
// (Config.ResponseSchema), nil when the agent answers in free text
// (engine.ResponseSchemer).
func (e *Engine) ResponseSchema() json.RawMessage { return e.cfg.ResponseSchema }
