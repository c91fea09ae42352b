package main

import (
	"encoding/json"
	"strconv"
)

// lgAnswered is what every answer of the Agent Protocol's runs/wait holds:
// the final values' messages.
var lgAnswered = []byte(`"messages":[`)

// lgBody is a stateless run of agent with text as the human message,
// streamed in mode when set.
func lgBody(agent, text, mode string) []byte {
	body := `{"assistant_id":` + strconv.Quote(agent) + `,"input":{"messages":[{"role":"user","content":` + strconv.Quote(text) + `}]}`
	if mode != "" {
		m, _ := json.Marshal(mode)
		body += `,"stream_mode":` + string(m)
	}
	return []byte(body + "}")
}
