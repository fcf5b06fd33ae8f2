package storetest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// proxy forwards TCP connections from a loopback address to a server, and
// can cut them all at once, as a server that goes down would.
type proxy struct {
	to   string
	addr string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newProxy starts a proxy to the server at to, on a new loopback port.
func newProxy(tb testing.TB, to string) *proxy {
	p := &proxy{to: to, conns: make(map[net.Conn]bool)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	p.addr = ln.Addr().String()
	p.serve(ln)
	tb.Cleanup(p.cut)
	return p
}

// serve accepts connections on ln until it is closed.
func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.to)
			if err != nil {
				c.Close()
				continue
			}
			if !p.track(c, s) {
				return
			}
			for _, pair := range [][2]net.Conn{{c, s}, {s, c}} {
				p.wg.Go(func() {
					_, _ = io.Copy(pair[0], pair[1])
					pair[0].Close()
					pair[1].Close()
				})
			}
		}
	})
}

// track records the two ends of a connection, or closes them and returns
// false when the proxy was cut meanwhile.
func (p *proxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		s.Close()
		return false
	}
	p.conns[c], p.conns[s] = true, true
	return true
}

// cut closes the listener and every connection, and waits for the copies
// to end: new connections are refused, open ones fail.
func (p *proxy) cut() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// restore listens again on the proxy's address after a cut.
func (p *proxy) restore(tb testing.TB) {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(tb, err, "listen again on %s", p.addr)
	p.serve(ln)
}
