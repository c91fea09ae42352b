package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// rawCall posts one 2026-07-28 JSON-RPC request to path and returns the
// result member of its answer (an SSE stream's last message, or a JSON
// body).
func rawCall(t *testing.T, e *env, path, method, params string) json.RawMessage {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method} {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			_ = json.Unmarshal([]byte(data), &msg)
		}
	}
	if msg.Result == nil {
		_ = json.Unmarshal(raw, &msg)
	}
	if msg.Result == nil {
		t.Fatalf("%s: no result in %d %s", method, res.StatusCode, raw)
	}
	return msg.Result
}

// golden compares got (JSON) with testdata/name, indented; -update
// rewrites the file.
func golden(t *testing.T, name string, got json.RawMessage) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs from the wire:\n%s", path, buf.Bytes())
	}
}

// The tool an agent with a card, skills and a response schema is, on the
// wire (tools/list).
func TestToolOnTheWire(t *testing.T) {
	e := newEnv(t)
	got := rawCall(t, e, "/mcp/agents/point", "tools/list",
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	var list struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(got, &list); err != nil {
		t.Fatal(err)
	}
	golden(t, "tools_point.json", list.Tools)
}
