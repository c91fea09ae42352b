package event_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"agentd/internal/event"
)

// BenchmarkPublishNoMatch1000 is the cost every publish pays on a busy
// server: 1,000 runs are being watched, this envelope concerns none of them.
func BenchmarkPublishNoMatch1000(b *testing.B) {
	bus := event.NewInProc()
	defer bus.Close()
	ctx := context.Background()
	for i := range 1000 {
		p := event.Pattern(fmt.Sprintf("engine.run.r%d.>", i))
		if _, err := bus.Subscribe(ctx, p, event.WithBufferSize(1)); err != nil {
			b.Fatal(err)
		}
	}
	env := event.Envelope{Subject: "engine.run.unwatched.stream.echo.delta", Payload: []byte(`{"text":"x"}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := bus.Publish(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFanOut100 publishes to 100 subscribers that drain concurrently.
func BenchmarkFanOut100(b *testing.B) {
	bus := event.NewInProc()
	defer bus.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var drained sync.WaitGroup
	for range 100 {
		sub, err := bus.Subscribe(ctx, "engine.run.r1.>", event.WithBufferSize(1024))
		if err != nil {
			b.Fatal(err)
		}
		drained.Go(func() {
			for range sub.C() {
			}
		})
	}
	env := event.Envelope{Subject: "engine.run.r1.stream.echo.delta", Payload: []byte(`{"text":"x"}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := bus.Publish(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cancel()
	drained.Wait()
}

func BenchmarkPatternMatch(b *testing.B) {
	cases := []struct {
		name    string
		pattern event.Pattern
		subject event.Subject
	}{
		{"literal", "engine.run.r1.stream.echo.delta", "engine.run.r1.stream.echo.delta"},
		{"star", "engine.run.*.stream.*.delta", "engine.run.r1.stream.echo.delta"},
		{"tail", "engine.run.r1.>", "engine.run.r1.stream.echo.delta"},
		{"miss", "engine.run.r2.>", "engine.run.r1.stream.echo.delta"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			matched := false
			for b.Loop() {
				matched = c.pattern.Match(c.subject)
			}
			if matched != (c.name != "miss") {
				b.Fatalf("Pattern(%q).Match(%q) = %v", c.pattern, c.subject, matched)
			}
		})
	}
}
