package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": "Mon, 10 Mar 2025 12:00:07 GMT"}, 7 * time.Second},
		{map[string]string{"Retry-After": "Mon, 10 Mar 2025 11:00:00 GMT"}, 0}, // in the past
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-1"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
	}
	for _, tc := range tests {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tc.header, got, tc.want)
		}
	}
}

func TestDecoderEdges(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than the reader's buffer
	input := ": comment\n" +
		"event: message\nid: 7\nretry: 100\n" +
		`data: {"choices":[{"index":0,"delta":{"content":"` + long + `"}}]}` + "\n\n" +
		"data: {\"choices\":[{\"index\":0,\n" + // one event over two data lines
		"data: \"delta\":{\"content\":\"!\"},\"finish_reason\":\"stop\"}]}\n\n" +
		`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n" // empty: skipped
	d := newDecoder(strings.NewReader(input), "http://x")
	var text strings.Builder
	for {
		c, err := d.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Text)
	}
	if text.String() != long+"!" {
		t.Errorf("text has %d bytes, want %d", text.Len(), len(long)+1)
	}
}

// recordedStream returns an OpenAI-shaped stream of n text chunks followed
// by a finish chunk, a usage chunk and [DONE].
func recordedStream(n int) []byte {
	var b bytes.Buffer
	const head = `data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_06737a9306","choices":[{"index":0,`
	for i := range n {
		fmt.Fprintf(&b, "%s\"delta\":{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i)
	}
	fmt.Fprintf(&b, "%s\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}\n\n", head)
	b.WriteString(`data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1000,"total_tokens":1009}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkDecode1000 parses a recorded 1,000-chunk stream from memory:
// the client's per-chunk cost without the network.
func BenchmarkDecode1000(b *testing.B) {
	data := recordedStream(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := newDecoder(bytes.NewReader(data), "http://x")
		n := 0
		for {
			c, err := d.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if c.Text != "" {
				n++
			}
		}
		if n != 1000 {
			b.Fatalf("got %d text chunks", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/chunk")
}
