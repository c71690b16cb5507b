package ztp

import (
	"context"
	"net"
	"net/http"
)

// InNetns is f making its connections in the network namespace ns: a
// lease on a front-panel port of a dataplane in a namespace of its own
// reaches the servers from there. "" is f itself. Its HTTP connections
// are not kept alive (provisioning makes a few).
func (f *Fetcher) InNetns(ns string) *Fetcher {
	if ns == "" {
		return f
	}
	g := *f
	tr := f.client.Transport.(*http.Transport).Clone()
	tr.DialContext = netnsDialer(ns)
	tr.DisableKeepAlives = true
	g.client = &http.Client{Transport: tr, Timeout: f.client.Timeout}
	g.TFTP.Netns = ns
	if f.SFTP != nil {
		s := *f.SFTP
		s.Netns = ns
		g.SFTP = &s
	}
	return &g
}

// netnsDialer dials in the network namespace ns ("": the caller's).
func netnsDialer(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
		if nserr := inNetns(ns, func() error {
			conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return nil
		}); nserr != nil {
			return nil, nserr
		}
		return conn, err
	}
}
