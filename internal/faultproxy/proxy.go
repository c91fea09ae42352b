// Package faultproxy is a TCP proxy that a fault test can cut: it forwards
// connections to one target and, while partitioned, holds the bytes of
// every connection in both directions and leaves new connections hanging —
// what a network partition looks like to both ends (no reset, no refusal,
// just silence), unlike a stopped server. Healing the partition delivers
// what was held.
//
// Goroutines: Serve's accept loop, and two copiers per connection; Close
// stops them all and waits for them.
//
// Imports: none.
package faultproxy

import (
	"net"
	"sync"
)

// Proxy forwards connections from its listener to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu          sync.Mutex
	partitioned bool
	healed      chan struct{} // closed when a partition ends
	conns       map[net.Conn]struct{}
	closed      bool
	wg          sync.WaitGroup
}

// Listen starts a proxy on a free loopback port that forwards to target.
func Listen(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Partition holds all traffic (on) or lets it flow again (off).
func (p *Proxy) Partition(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && !p.partitioned:
		p.partitioned, p.healed = true, make(chan struct{})
	case !on && p.partitioned:
		p.partitioned = false
		close(p.healed)
	}
}

// gate returns a channel that is closed when traffic may flow (at once
// when it may now).
func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partitioned {
		return p.healed
	}
	open := make(chan struct{})
	close(open)
	return open
}

// Close stops the proxy and cuts every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	if p.partitioned {
		p.partitioned = false
		close(p.healed)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) forget(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve connects c to the target once traffic may flow, then copies both
// ways.
func (p *Proxy) serve(c net.Conn) {
	defer p.forget(c)
	<-p.gate() // a new connection hangs during a partition
	s, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(s) {
		return
	}
	defer p.forget(s)
	var both sync.WaitGroup
	both.Go(func() { p.pipe(s, c) })
	p.pipe(c, s)
	both.Wait()
}

// pipe copies from src to dst, holding each chunk while partitioned; it
// closes both ends when either side is done, so its twin returns too.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a cut: either way this pipe is done
			return
		}
	}
}
