package linux

import (
	"bytes"
	"path/filepath"
	"slices"
	"sync"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/resolvconf"
)

// DNSServer and DNSGlobal on the Linux backend: the resolver
// configuration the switch uses, <EtcDir>/resolv.conf (Debian's glibc
// resolver without systemd-resolved; swmgr replaces the file, so a
// symbolic link to a resolved stub becomes a file of its own). The
// servers in the order they were created, the first three written; the
// domain as the search domain. The file is left alone until the first
// DNSServer or Domain is configured. The objects of one apply are written once;
// the undo puts back the previous file.

type dnsRunner struct {
	path    string
	mu      sync.Mutex
	applied resolvconf.Config
}

func (b *Backend) dnsStage(tx *Tx, kind string) *resolvconf.Config {
	return tx.staged("resolv.conf", kind, func() any {
		b.dns.mu.Lock()
		defer b.dns.mu.Unlock()
		c := b.dns.applied
		c.Servers = slices.Clone(c.Servers)
		return &c
	}, b.flushDNS).(*resolvconf.Config)
}

func (b *Backend) flushDNS(tx *Tx, value any) error {
	staged := value.(*resolvconf.Config)
	b.dns.mu.Lock()
	previous := b.dns.applied
	b.dns.mu.Unlock()
	old, existed, err := readOptional(b.dns.path)
	if err != nil {
		return err
	}
	want := staged.Render()
	set := func(c resolvconf.Config) {
		b.dns.mu.Lock()
		b.dns.applied = c
		b.dns.mu.Unlock()
	}
	// swmgr takes the file over at the first DNSServer or Domain: until
	// then the distribution's stays as it is.
	ours := existed && bytes.HasPrefix([]byte(old), []byte(resolvconf.Header))
	if (existed && bytes.Equal([]byte(old), want)) || (len(staged.Servers) == 0 && staged.Domain == "" && !ours) {
		set(*staged)
		return nil
	}
	return tx.change("write "+b.dns.path,
		func() error {
			if err := atomicfile.Replace(b.dns.path, want, 0o644); err != nil {
				return err
			}
			set(*staged)
			return nil
		},
		func() error {
			set(previous)
			return restoreFile(b.dns.path, old, existed)
		})
}

func noCheck(b *Backend, c changeView) error { return nil }

var dnsServerDriver = &driver{
	check: noCheck,
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		b.dnsStage(tx, "DNSServer").SetServer(after.Str("IPAddr"), true)
		return nil
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		b.dnsStage(tx, "DNSServer").SetServer(before.Str("IPAddr"), false)
		return nil
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		b.dns.mu.Lock()
		defer b.dns.mu.Unlock()
		return model.Object{"InUse": b.dns.applied.InUse(o.Str("IPAddr"))}, nil
	},
}

var dnsGlobalDriver = &driver{
	check: noCheck,
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		b.dnsStage(tx, "DNSGlobal").Domain = after.Str("Domain")
		return nil
	},
	// DNSGlobal is a singleton: it is never deleted.
	remove: func(b *Backend, tx *Tx, before model.Object) error { return nil },
	state: func(b *Backend, o model.Object) (model.Object, error) {
		content, _, err := readOptional(b.dns.path)
		return model.Object{"ResolvConf": content}, err
	},
}

func (b *Backend) startDNS(etcDir string) {
	b.dns = &dnsRunner{path: filepath.Join(etcDir, "resolv.conf")}
	b.daemonDrivers["DNSServer"] = dnsServerDriver
	b.daemonDrivers["DNSGlobal"] = dnsGlobalDriver
}
