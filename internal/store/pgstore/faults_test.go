package pgstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/pgtest"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// proxy forwards TCP connections to a PostgreSQL server and, once armed,
// cuts the connection whose client sends a message containing a pattern:
// before forwarding it (the server never sees it) or just after it and the
// rest of its batch, through the Sync that ends it.
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu      sync.Mutex
	pattern []byte
	after   bool // forward the matching message, then cut
	conns   []net.Conn
	// cutPort is the proxy's port on the server side of the connection
	// it cut last (pg_stat_activity's client_port of its backend).
	cutPort int
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
	cutting := false // the pattern was seen: forward up to the Sync, then cut
	for first := true; ; first = false {
		n, err := client.Read(buf)
		if err != nil {
			return
		}
		if first && isCancelRequest(buf[:n]) {
			// pgx asks the server to cancel what runs on a connection that
			// failed; that would race the server's commit of the batch it
			// got whole, which is what "the answer was lost" means here.
			return
		}
		p.mu.Lock()
		hit := p.pattern != nil && bytes.Contains(buf[:n], p.pattern)
		after := p.after
		if hit {
			p.pattern = nil // one shot
			p.cutPort = server.LocalAddr().(*net.TCPAddr).Port
		}
		p.mu.Unlock()
		if hit && !after {
			return
		}
		if _, err := server.Write(buf[:n]); err != nil {
			return
		}
		// A read may end inside the message batch: the server gets it all,
		// through the Sync that ends it, before the cut. It then gets an
		// orderly end (a reset could drop what it has not read yet) and
		// finishes the batch, whose answer never reaches the client.
		cutting = cutting || hit
		if cutting && bytes.HasSuffix(buf[:n], syncMessage) {
			client.Close()
			server.(*net.TCPConn).CloseWrite()
			_, _ = io.Copy(io.Discard, server) // until the server hangs up
			return
		}
	}
}

// isCancelRequest reports whether msg is the protocol's CancelRequest:
// length 16, code 80877102.
func isCancelRequest(msg []byte) bool {
	return len(msg) == 16 && binary.BigEndian.Uint32(msg[0:4]) == 16 && binary.BigEndian.Uint32(msg[4:8]) == 80877102
}

// syncMessage is the protocol's Sync, which ends a batch ('S', length 4).
var syncMessage = []byte{'S', 0, 0, 0, 4}

// waitCutBackend waits until the backend of the connection the proxy cut
// has ended: a change it received runs on the server after the cut, and
// must have committed or rolled back before the test looks.
func (p *proxy) waitCutBackend(t *testing.T, dsn string) {
	t.Helper()
	p.mu.Lock()
	port := p.cutPort
	p.mu.Unlock()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	deadline := time.Now().Add(waitLimit)
	for {
		var n int
		err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE client_port = $1`, port).Scan(&n)
		if err != nil {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cut connection's backend still runs after %v", waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
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

// A connection lost while the statements of a change are being prepared
// (the first use of them on a connection) leaves nothing behind: nothing
// ran yet, so Apply retries on a new connection and the change is written
// once.
func TestApplyRetriesAConnectionLostWhilePreparing(t *testing.T) {
	p, dsn := newProxy(t, pgtest.DSN(t))
	s := openDSN(t, dsn)
	p.arm("event_frames", false) // the Parse of the frames statement
	if err := s.Apply(t.Context(), store.Change{Events: events("r", 1, 3)}); err != nil {
		t.Fatalf("Apply across a lost connection: got %v, want success after a retry", err)
	}
	page, err := s.ReadEvents(t.Context(), "r", 0, 0)
	if err != nil || len(page.Events) != 3 || page.LastSeq != 3 {
		t.Fatalf("ReadEvents: got %d events (last %d), %v; want 1..3 once", len(page.Events), page.LastSeq, err)
	}
}

// A connection lost once the change was sent leaves the outcome unknown
// (the change is one implicit transaction, committed when the server
// reaches the batch's end): Apply does not retry and says so. The caller
// resolves it by applying the same change again: success means the first
// never committed, a Conflict (seq, version or a DuplicateError naming the
// same task) that it did.
func TestApplyCommitOutcomeUnknown(t *testing.T) {
	tests := []struct {
		name          string
		serverGotIt   bool
		wantReapplied bool
	}{
		{"the change never reached the server", false, true},
		{"the answer was lost", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, dsn := newProxy(t, pgtest.DSN(t))
			s := openDSN(t, dsn)
			// Prepare the statements on the connection first, so that the
			// cut meets the batch that runs them.
			if err := s.Apply(t.Context(), store.Change{Events: events("warm", 1, 1)}); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			change := store.Change{Events: events("run-cut", 1, 2)}
			p.arm("run-cut", tt.serverGotIt) // the batch's arguments
			err := s.Apply(t.Context(), change)
			if !errors.Is(err, pgstore.ErrCommitUnknown) || !errdefs.IsNotAvailable(err) {
				t.Fatalf("Apply with its connection cut: got %v, want ErrCommitUnknown classified NotAvailable", err)
			}
			p.waitCutBackend(t, dsn)
			err = s.Apply(t.Context(), change)
			if reapplied := err == nil; reapplied != tt.wantReapplied {
				t.Fatalf("re-Apply: got %v, want success %v", err, tt.wantReapplied)
			}
			if err != nil && !errdefs.IsConflict(err) {
				t.Fatalf("re-Apply of a committed change: got %v, want Conflict", err)
			}
			page, err := s.ReadEvents(t.Context(), "run-cut", 0, 0)
			if err != nil || page.LastSeq != 2 || len(page.Events) != 2 {
				t.Fatalf("ReadEvents: got %d events (last %d), %v; want 1..2 once", len(page.Events), page.LastSeq, err)
			}
		})
	}
}
