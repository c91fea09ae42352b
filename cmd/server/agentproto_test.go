package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestLangGraphSDK runs @langchain/langgraph-sdk (interop/js/langgraph.mjs)
// against a real server process on memstore: assistants, threads, runs in
// every stream mode on echo, the assistant (a tool call), the research
// workflow (subgraph events) and the refund flow (interrupts answered with
// command.resume), joinStream after a cut, a fork, multitask strategies
// and history paging. It skips only when node or the packages are missing
// and REQUIRE_INTEROP is unset.
func TestLangGraphSDK(t *testing.T) { testLangGraphSDK(t, "") }

// TestLangGraphSDKPostgres is TestLangGraphSDK on PostgreSQL, where every
// run keeps its checkpoints and the threads live in their table.
func TestLangGraphSDKPostgres(t *testing.T) { testLangGraphSDK(t, sharedDSN(t)) }

func testLangGraphSDK(t *testing.T, dsn string) {
	skipShort(t)
	node, dir := nodetest.Find(t, "@langchain/langgraph-sdk")
	r := startReplica(t, "lg", dsn, writePushConfig(t, nil, map[string]any{"allow_private": true})) // the SDK's webhooks reach loopback
	nodetest.Run(t, node, dir, r.base, "langgraph.mjs", 2*time.Minute, nil)
}

// lgFrame is one event of an Agent Protocol stream.
type lgFrame struct {
	id, event string
	data      json.RawMessage
}

// readFrames reads an Agent Protocol stream until it closes; each frame
// is passed to each (when set) as it arrives, which may stop the read by
// returning false. It returns the frames and the error that broke the
// stream (nil when it closed between frames).
func readFrames(body io.Reader, each func(lgFrame) bool) ([]lgFrame, error) {
	br := bufio.NewReader(body)
	var out []lgFrame
	var f lgFrame
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && f.event == "" {
				return out, nil
			}
			return out, fmt.Errorf("stream broke: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && f.event != "":
			out = append(out, f)
			if each != nil && !each(f) {
				return out, nil
			}
			f = lgFrame{}
		case strings.HasPrefix(line, "id: "):
			f.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			f.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			f.data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		}
	}
}
