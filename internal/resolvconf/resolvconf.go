// Package resolvconf renders the resolver configuration (resolv.conf(5))
// of the DNSServer and DNSGlobal objects, for every backend alike: the
// Linux backend writes it, the simulated switch shows it.
package resolvconf

import (
	"fmt"
	"strings"
)

// MaxServers is how many name servers the resolver uses (glibc's MAXNS).
const MaxServers = 3

// Header is the first line of the file, which marks it as swmgr's.
const Header = "# written by swmgr from DNSServer and DNSGlobal; changes here are overwritten\n"

// Render returns the file for servers (in order; the first MaxServers are
// written) and domain ("" for none).
func Render(servers []string, domain string) []byte {
	var b strings.Builder
	b.WriteString(Header)
	if domain != "" {
		fmt.Fprintf(&b, "search %s\n", domain)
	}
	for i, s := range servers {
		if i == MaxServers {
			break
		}
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	return []byte(b.String())
}

// Config is the resolver configuration a backend keeps: the servers in
// the order they were created, and the domain. It is not safe for
// concurrent use; its owner locks.
type Config struct {
	Servers []string
	Domain  string
}

// SetServer adds (add true) or removes a server, keeping the order.
func (c *Config) SetServer(addr string, add bool) {
	for i, s := range c.Servers {
		if s == addr {
			if !add {
				c.Servers = append(c.Servers[:i:i], c.Servers[i+1:]...)
			}
			return
		}
	}
	if add {
		c.Servers = append(c.Servers, addr)
	}
}

// InUse reports whether addr is among the servers the resolver uses.
func (c *Config) InUse(addr string) bool {
	for i, s := range c.Servers {
		if i < MaxServers && s == addr {
			return true
		}
	}
	return false
}

// Render renders c.
func (c *Config) Render() []byte { return Render(c.Servers, c.Domain) }
