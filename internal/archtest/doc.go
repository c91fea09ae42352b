// Package archtest holds the checks that keep docs/architecture.md true of
// the code: every package of agentd sits in one layer of the table below,
// no import runs up the layers, and every package's documentation names,
// on its "Imports:" line, exactly the packages of agentd it imports.
// It has no code; its test reads the module with go list.
//
// The layers, lowest first (a package may import its own layer and those
// below it, never one above):
//
//	0 base            errdefs, model, strictjson, netguard, logctx,
//	                  faultproxy, telemetry/otlptest, archtest, nodetest
//	1 vocabulary      run, llm, llm/openai, llm/openai/openaitest,
//	                  llm/scripted, tool, mcptool, calltree
//	2 engine contract engine, engine/enginetest
//	3 engines, agents engine/loop, engine/graph, engine/goal, engine/flow,
//	                  engine/remote, engine/conformance, agent,
//	                  agent/judge, agent/agenttest, governor
//	4 storage         store, store/memstore, store/pgstore,
//	                  store/storetest, pgtest, migrations
//	5 the log, memory runlog, retention, liveness, memory
//	6 runtime         runtime, push
//	7 access          auth, limits
//	8 faces           api, a2a, a2a/pushtest, agui, agentproto,
//	                  mcpserver, console, telemetry
//	9 wiring          config
//
// Imports: none.
package archtest
