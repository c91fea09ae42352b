package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	node, dir := interopJS(t, filepath.Join("@langchain", "langgraph-sdk"))
	r := startReplica(t, "lg", dsn, writePushConfig(t, nil, map[string]any{"allow_private": true})) // the SDK's webhooks reach loopback
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "langgraph.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTD_URL="+r.base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node langgraph.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// interopJS finds node and interop/js with pkg installed, or skips (fails
// under REQUIRE_INTEROP).
func interopJS(t *testing.T, pkg string) (node, dir string) {
	t.Helper()
	required := os.Getenv("REQUIRE_INTEROP") != ""
	node, err := exec.LookPath("node")
	if err != nil {
		if required {
			t.Fatal("REQUIRE_INTEROP is set but node is not installed")
		}
		t.Skip("node is not installed (set REQUIRE_INTEROP=1 to make this a failure)")
	}
	dir, err = filepath.Abs(filepath.Join("..", "..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		if required {
			t.Fatalf("REQUIRE_INTEROP is set but %s is not installed in %s: run `npm ci` there", pkg, dir)
		}
		t.Skipf("%s is not installed in %s: run `npm ci` there", pkg, dir)
	}
	return node, dir
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
