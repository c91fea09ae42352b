// Package mcptool makes the tools of Model Context Protocol servers agentd
// tools: it connects to a server — a command it starts and talks to over
// stdio, or a streamable-HTTP endpoint — through the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk), lists its tools once, and
// returns each as a tool.Tool named "<server>__<tool>". Registered in a
// tool.Registry, they are offered to the model, their arguments checked
// against the server's input schema and their calls governed and approved
// like any built-in tool's.
//
// A call's result is the text of the server's content (non-text content
// is described, not dropped silently); a result the server flags as an
// error (isError) is an error result the model reads; a protocol or
// transport failure is a tool error too, never a run failure.
//
// A Conn owns its session (and, for stdio, the child process): Close ends
// both. Callers that build tools from configuration close them when the
// server shuts down. A session that ends on its own (a stdio server that
// exited) is opened again by the next call, once per call; the call that
// was in flight when it ended fails and is never sent again, since it may
// have run. A goroutine per session waits for its end; Close waits for it.
//
// Imports: errdefs, tool. mcptool must not import engine, runtime, api or
// config.
package mcptool
