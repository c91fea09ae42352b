package faultproxy

import (
	"bufio"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// A partition holds bytes of live connections and leaves new ones
// hanging, without errors; healing it delivers everything held.
func TestPartitionHoldsThenDelivers(t *testing.T) {
	p, err := Listen(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip := func(msg string, within time.Duration) (string, error) {
		if _, err := c.Write([]byte(msg + "\n")); err != nil {
			return "", err
		}
		_ = c.SetReadDeadline(time.Now().Add(within))
		return r.ReadString('\n')
	}
	if got, err := roundTrip("before", 5*time.Second); err != nil || got != "before\n" {
		t.Fatalf("before the partition: %q, %v", got, err)
	}
	p.Partition(true)
	if got, err := roundTrip("during", 300*time.Millisecond); err == nil {
		t.Fatalf("during the partition the echo came through: %q", got)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("during the partition: %v, want a timeout (held, not cut)", err)
	}
	fresh, err := net.Dial("tcp", p.Addr()) // accepted, then left hanging
	if err != nil {
		t.Fatalf("a new connection during the partition was refused: %v", err)
	}
	defer fresh.Close()
	p.Partition(false)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "during\n" {
		t.Fatalf("after healing, the held echo: %q, %v", got, err)
	}
	if _, err := fresh.Write([]byte("fresh\n")); err != nil {
		t.Fatal(err)
	}
	_ = fresh.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := bufio.NewReader(fresh).ReadString('\n'); err != nil || got != "fresh\n" {
		t.Fatalf("the connection opened during the partition, after healing: %q, %v", got, err)
	}
}
