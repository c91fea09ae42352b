package pgstore_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/pgtest"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// proxy forwards TCP connections to a PostgreSQL server and, once armed,
// cuts the connection whose client sends a message containing a pattern:
// before forwarding it (the server never sees it) or just after.
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu      sync.Mutex
	pattern []byte
	after   bool // forward the matching message, then cut
	conns   []net.Conn
}

// newProxy starts a proxy to the server of dsn and returns it with dsn
// rewritten to connect through it.
func newProxy(t *testing.T, dsn string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("the proxy needs a URL DSN: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &proxy{ln: ln, target: u.Host}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// arm makes the proxy cut the next connection that sends pattern.
func (p *proxy) arm(pattern string, after bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pattern, p.after = []byte(pattern), after
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(c, s) })
		p.wg.Go(func() { io.Copy(c, s); c.Close() })
	}
}

// pipe copies client to server, watching for the armed pattern.
func (p *proxy) pipe(client, server net.Conn) {
	defer server.Close()
	defer client.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		hit := p.pattern != nil && bytes.Contains(buf[:n], p.pattern)
		after := p.after
		if hit {
			p.pattern = nil // one shot
		}
		p.mu.Unlock()
		if hit && !after {
			return
		}
		if _, err := server.Write(buf[:n]); err != nil || hit {
			return
		}
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// A connection lost before COMMIT leaves nothing behind: Apply retries on
// a new connection and the change is written once.
func TestApplyRetriesAConnectionLostBeforeCommit(t *testing.T) {
	p, dsn := newProxy(t, pgtest.DSN(t))
	s := openDSN(t, dsn)
	p.arm("event_frames", false) // the batch's statement
	if err := s.Apply(t.Context(), store.Change{Events: events("r", 1, 3)}); err != nil {
		t.Fatalf("Apply across a lost connection: got %v, want success after a retry", err)
	}
	page, err := s.ReadEvents(t.Context(), "r", 0, 0)
	if err != nil || len(page.Events) != 3 || page.LastSeq != 3 {
		t.Fatalf("ReadEvents: got %d events (last %d), %v; want 1..3 once", len(page.Events), page.LastSeq, err)
	}
}

// A connection lost during COMMIT leaves the outcome unknown: Apply does
// not retry and says so. The caller resolves it by applying the same change
// again: success means the first never committed, a Conflict (seq, version
// or a DuplicateError naming the same task) that it did.
func TestApplyCommitOutcomeUnknown(t *testing.T) {
	tests := []struct {
		name          string
		serverGotIt   bool
		wantReapplied bool
	}{
		{"COMMIT never reached the server", false, true},
		{"the answer to COMMIT was lost", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, dsn := newProxy(t, pgtest.DSN(t))
			s := openDSN(t, dsn)
			change := store.Change{Events: events("r", 1, 2)}
			p.arm("commit", tt.serverGotIt)
			err := s.Apply(t.Context(), change)
			if !errors.Is(err, pgstore.ErrCommitUnknown) || !errdefs.IsNotAvailable(err) {
				t.Fatalf("Apply with COMMIT cut: got %v, want ErrCommitUnknown classified NotAvailable", err)
			}
			err = s.Apply(t.Context(), change)
			if reapplied := err == nil; reapplied != tt.wantReapplied {
				t.Fatalf("re-Apply: got %v, want success %v", err, tt.wantReapplied)
			}
			if err != nil && !errdefs.IsConflict(err) {
				t.Fatalf("re-Apply of a committed change: got %v, want Conflict", err)
			}
			page, err := s.ReadEvents(t.Context(), "r", 0, 0)
			if err != nil || page.LastSeq != 2 || len(page.Events) != 2 {
				t.Fatalf("ReadEvents: got %d events (last %d), %v; want 1..2 once", len(page.Events), page.LastSeq, err)
			}
		})
	}
}
