// Package config reads agentd's YAML configuration — server, model
// providers, agents — validates it strictly and builds the runtime's agents
// from it.
//
// Unknown keys and dangling references are errors that name their path
// (`agents[2].tools[0]: unknown tool "clok"`). Secrets come from the
// environment only: a provider names the variable that holds its key.
// Without a file, the embedded demo configuration (demo.yaml) is used.
//
// config is the one package besides cmd/server that may import everything
// it builds (runtime, engines, llm, tool).
//
// Imports: agent, agent/judge, auth, calltree, engine, engine/conformance,
// engine/flow, engine/goal, engine/graph, engine/loop, engine/remote, errdefs,
// governor, limits, llm, llm/openai, llm/scripted, mcptool, memory, runtime,
// strictjson, tool.
package config
