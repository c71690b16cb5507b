package ztp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SFTPClient reads files over SFTP (sftp://user@host[:port]/path) with
// credentials configured on the switch, never taken from DHCP: a private
// key, a password, or both. The server's host key is checked against
// known hosts configured on the switch too (DHCP is as untrusted as the
// network: a host key it gave would vouch for whoever answered DHCP); an
// unknown key is refused unless AllowUnknownHostKey.
type SFTPClient struct {
	// User logs in when the URL names none.
	User     string
	Signer   ssh.Signer // nil: no key
	Password string     // "": no password
	// KnownHosts checks the server's host key (from an OpenSSH
	// known_hosts file: LoadKnownHosts); nil knows no host.
	KnownHosts ssh.HostKeyCallback
	// AllowUnknownHostKey accepts a server whose host key KnownHosts does
	// not know (but never one whose key differs from the known one).
	AllowUnknownHostKey bool
	Timeout             time.Duration // the whole transfer; default 30 s
	// Netns is the network namespace the connection is made in ("":
	// swmgr's own).
	Netns string
	// OnUnknownHostKey, if set, hears the fingerprint of an unknown key
	// that AllowUnknownHostKey let through.
	OnUnknownHostKey func(host, fingerprint string)
}

// LoadKnownHosts reads OpenSSH known_hosts files ("host key" lines; a
// server on another port than 22 is "[host]:port").
func LoadKnownHosts(files ...string) (ssh.HostKeyCallback, error) {
	return knownhosts.New(files...)
}

// hostKeyCallback checks a server's key: known, else refused unless
// unknown keys are allowed; a key that differs from a known one is always
// refused.
func (c *SFTPClient) hostKeyCallback(hostport string, remote net.Addr, key ssh.PublicKey) error {
	fp := ssh.FingerprintSHA256(key)
	var err error = &knownhosts.KeyError{}
	if c.KnownHosts != nil {
		err = c.KnownHosts(hostport, remote, key)
	}
	var ke *knownhosts.KeyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ke) && len(ke.Want) > 0:
		return fmt.Errorf("the host key of %s (%s) is not the one known for it: refused", hostport, fp)
	case errors.As(err, &ke) && c.AllowUnknownHostKey:
		if c.OnUnknownHostKey != nil {
			c.OnUnknownHostKey(hostport, fp)
		}
		return nil
	case errors.As(err, &ke):
		return fmt.Errorf("the host key of %s (%s) is unknown: add it to the known hosts (--ztp-sftp-known-hosts) or allow unknown keys (--ztp-sftp-allow-unknown-host-key)", hostport, fp)
	}
	return fmt.Errorf("host key of %s: %w", hostport, err)
}

// Get reads the file u names, at most max bytes: a larger one (as the
// server states it, or as it is read) is refused, not cut; a file that is
// not a regular one (a FIFO would hang the read) too.
func (c *SFTPClient) Get(ctx context.Context, u *url.URL, max int64) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("%s: SFTP has no credentials configured (--ztp-sftp-key or --ztp-sftp-password-file)", u.Redacted())
	}
	if _, set := u.User.Password(); set {
		return nil, fmt.Errorf("%s: a password in the URL is refused (DHCP is no place for a secret; configure it on the switch)", u.Redacted())
	}
	user := u.User.Username()
	if user == "" {
		user = c.User
	}
	if user == "" {
		return nil, fmt.Errorf("%s names no user to log in as (sftp://user@host/path, or --ztp-sftp-user)", u.Redacted())
	}
	if u.Path == "" {
		return nil, fmt.Errorf("%s names no file", u.Redacted())
	}
	hostport := u.Host
	if u.Port() == "" {
		hostport = net.JoinHostPort(u.Hostname(), "22")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(err error) error { return fmt.Errorf("sftp %s: %w", u.Redacted(), err) }
	conn, err := netnsDialer(c.Netns)(ctx, "tcp", hostport)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var auth []ssh.AuthMethod
	if c.Signer != nil {
		auth = append(auth, ssh.PublicKeys(c.Signer))
	}
	if c.Password != "" {
		password := c.Password
		auth = append(auth, ssh.Password(password), ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
			answers := make([]string, len(questions))
			for i := range answers {
				answers[i] = password
			}
			return answers, nil
		}))
	}
	cfg := &ssh.ClientConfig{User: user, Auth: auth, HostKeyCallback: c.hostKeyCallback, Timeout: timeout}
	sc, chans, reqs, err := ssh.NewClientConn(conn, hostport, cfg)
	if err != nil {
		return nil, fail(err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	sf, err := sftp.NewClient(client)
	if err != nil {
		return nil, fail(err)
	}
	defer sf.Close()
	// Looked at before it is opened (the server's open of a FIFO waits for
	// a writer), and again once open.
	check := func(fi os.FileInfo, err error) error {
		switch {
		case err != nil:
			return fail(err)
		case !fi.Mode().IsRegular():
			return fail(fmt.Errorf("not a regular file (%s)", fi.Mode().Type()))
		case fi.Size() > max:
			return fail(fmt.Errorf("the file is %d bytes, larger than %d", fi.Size(), max))
		}
		return nil
	}
	if err := check(sf.Stat(u.Path)); err != nil {
		return nil, err
	}
	f, err := sf.Open(u.Path)
	if err != nil {
		return nil, fail(err)
	}
	defer f.Close()
	if err := check(f.Stat()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fail(err)
	}
	if int64(len(data)) > max {
		return nil, fail(fmt.Errorf("larger than %d bytes", max))
	}
	return data, nil
}
