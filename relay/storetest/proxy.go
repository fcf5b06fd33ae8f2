// A TCP proxy that can cut a store's connections, to test a store that goes down.

package storetest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// proxy forwards TCP connections from a loopback address to a server, and
// can cut them all at once, as a server that goes down would. It keeps
// its port while cut, closing the connections it accepts, so that no
// other socket takes the port before it is restored.
type proxy struct {
	to   string
	addr string
	ln   net.Listener

	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
	copies sync.WaitGroup
}

// newProxy starts a proxy to the server at to, on a new loopback port, and
// stops it when tb ends.
func newProxy(tb testing.TB, to string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	p := &proxy{to: to, addr: ln.Addr().String(), ln: ln, conns: make(map[net.Conn]bool)}
	var accepting sync.WaitGroup
	accepting.Go(p.serve)
	tb.Cleanup(func() {
		ln.Close()
		accepting.Wait()
		p.cut()
	})
	return p
}

// serve accepts connections until the listener is closed.
func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.isDown() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			continue
		}
		for _, pair := range [][2]net.Conn{{c, s}, {s, c}} {
			p.copies.Go(func() {
				_, _ = io.Copy(pair[0], pair[1])
				pair[0].Close()
				pair[1].Close()
			})
		}
	}
}

func (p *proxy) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// track records the two ends of a connection, or closes them and returns
// false when the proxy was cut meanwhile.
func (p *proxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		c.Close()
		s.Close()
		return false
	}
	p.conns[c], p.conns[s] = true, true
	return true
}

// cut closes every connection, and waits for the copies to end: new
// connections are closed at once, open ones fail.
func (p *proxy) cut() {
	p.mu.Lock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.copies.Wait()
}

// restore forwards new connections again after a cut.
func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}
