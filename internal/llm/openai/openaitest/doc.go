// Package openaitest is a fake OpenAI-compatible Chat Completions endpoint
// for tests: it answers POST /v1/chat/completions with the replies a test
// scripts, streamed as the real API streams them (chat.completion.chunk
// events, a usage chunk, data: [DONE]), and records every request body.
//
// A test starts one with New, points an openai.Client (or an agentd
// configuration's provider base_url) at Server.URL+"/v1", and reads
// Requests afterwards to check what the engine sent.
//
// openaitest imports only the standard library and net/http/httptest.
//
// Imports: none.
package openaitest
