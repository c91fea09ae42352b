package scripted_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"agentd/internal/llm"
)

// benchStream measures a whole turn; ns/token = ns/op ÷ tokens.
func benchStream(b *testing.B, text string, tokens int) {
	p := newProvider(b, echoYAML)
	req := llm.Request{Messages: user(text)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			c, err := s.Next()
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
		s.Close()
		if n != tokens {
			b.Fatalf("got %d tokens, want %d", n, tokens)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}

func BenchmarkCount1000(b *testing.B) { benchStream(b, "stream 1000", 1000) }

func BenchmarkEcho1000Words(b *testing.B) {
	benchStream(b, strings.TrimSpace(strings.Repeat("word ", 1000)), 1000)
}
