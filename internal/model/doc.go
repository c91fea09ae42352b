// Package model holds the conversation vocabulary every layer shares:
// Message, Role, Part (text, data, file by bytes or URL, tool call, tool
// result), Artifact and TokenUsage.
//
// The JSON shapes are agentd's own (snake_case, a "type" discriminator on
// Part) and round-trip losslessly; the A2A layer translates them to the
// protocol's shapes.
//
// Imports: none.
package model
