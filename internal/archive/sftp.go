package archive

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/swmgr/swmgr/internal/model"
)

// Remote is where an SFTP transfer goes, with the credentials to use.
type Remote struct {
	Host     string
	Port     int // 0: 22
	User     string
	Password string
}

// Attempts bounds a transfer: 1+Retries attempts, each within Timeout,
// Backoff apart (doubling, at most 30 s).
type Attempts struct {
	Retries int
	Timeout time.Duration
	Backoff time.Duration // 0: one second
	// OnRetry, if set, hears each failed attempt that will be retried.
	OnRetry func(attempt int, err error) `json:"-"`
}

// SFTP transfers files over SFTP, checking host keys against pins.
type SFTP struct {
	Pins *HostKeys
}

// ErrAuth means the server refused the credentials.
var ErrAuth = errors.New("the SFTP server refused the user name or password")

// Upload writes data to p on the remote: to a temporary name in the same
// directory, then renamed over p, so a reader never sees half a file.
// Missing directories are made. p must be a file path (model.CheckFilePath);
// what is at p must be a regular file or nothing: an upload never renames
// over a directory, a link or a device.
func (s *SFTP) Upload(ctx context.Context, r Remote, p string, data []byte, a Attempts) error {
	if why := model.CheckFilePath(p, true); why != "" {
		return permanent(fmt.Errorf("the destination %q: %s", p, why))
	}
	return retry(ctx, a, func(ctx context.Context) error {
		return s.session(ctx, r, a.Timeout, func(c *sftp.Client) error {
			if err := notReplaceable(c, p); err != nil {
				return err
			}
			if err := c.MkdirAll(path.Dir(p)); err != nil {
				return fmt.Errorf("make %s: %w", path.Dir(p), err)
			}
			var rnd [6]byte
			rand.Read(rnd[:])
			tmp := path.Join(path.Dir(p), "."+path.Base(p)+"."+hex.EncodeToString(rnd[:])+".tmp")
			f, err := c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL)
			if err != nil {
				return fmt.Errorf("create %s: %w", tmp, err)
			}
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = c.Chmod(tmp, 0o600)
			}
			if err == nil {
				err = notReplaceable(c, p) // made meanwhile?
			}
			if err == nil {
				err = c.PosixRename(tmp, p)
			}
			if err != nil {
				c.Remove(tmp)
				return fmt.Errorf("write %s: %w", p, err)
			}
			return nil
		})
	})
}

// notReplaceable refuses a p on the server that is there and is not a
// regular file.
func notReplaceable(c *sftp.Client, p string) error {
	fi, err := c.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check %s: %w", p, err)
	case fi.IsDir():
		return permanent(fmt.Errorf("%s is a directory on the server; swmgr will not replace it: give DstFile a file name", p))
	case !fi.Mode().IsRegular():
		return permanent(fmt.Errorf("%s is not a regular file on the server (%s); swmgr will not replace it", p, fi.Mode().Type()))
	}
	return nil
}

// Download reads p from the remote (at most MaxFileSize bytes).
func (s *SFTP) Download(ctx context.Context, r Remote, p string, a Attempts) ([]byte, error) {
	var data []byte
	err := s.Fetch(ctx, r, p, a, func(rd io.Reader) error {
		var err error
		data, err = io.ReadAll(io.LimitReader(rd, MaxFileSize+1))
		if err == nil && len(data) > MaxFileSize {
			err = fmt.Errorf("%s is larger than %d bytes", p, MaxFileSize)
		}
		return err
	})
	return data, err
}

// Fetch opens p on the remote and hands it to fn, which reads it as it
// comes (a restore decodes it without holding the file). p must be a
// regular file of at most MaxFileSize bytes, as the server reports it;
// else the fetch fails at once, without retries. An error of the transfer
// (a read that failed) is retried like a failed connection, and fn runs
// again on the next attempt; any other error of fn (the content) is not.
func (s *SFTP) Fetch(ctx context.Context, r Remote, p string, a Attempts, fn func(io.Reader) error) error {
	return retry(ctx, a, func(ctx context.Context) error {
		return s.session(ctx, r, a.Timeout, func(c *sftp.Client) error {
			// Looked at before it is opened (the server's open of a FIFO
			// would wait for a writer), and again once open.
			check := func(fi os.FileInfo, err error) error {
				switch {
				case err != nil:
					return fmt.Errorf("stat %s: %w", p, err)
				case !fi.Mode().IsRegular():
					return permanent(fmt.Errorf("%s is not a regular file on the server (%s)", p, describeType(fi.Mode())))
				case fi.Size() > MaxFileSize:
					return permanent(fmt.Errorf("%s is %d bytes, larger than %d, the most a restore reads", p, fi.Size(), MaxFileSize))
				}
				return nil
			}
			if err := check(c.Stat(p)); err != nil {
				return err
			}
			f, err := c.Open(p)
			if err != nil {
				return fmt.Errorf("open %s: %w", p, err)
			}
			defer f.Close()
			if err := check(f.Stat()); err != nil {
				return err
			}
			rd := &watchedReader{r: bufio.NewReaderSize(f, 1<<20)}
			if err := fn(rd); err != nil {
				if rd.err != nil {
					return fmt.Errorf("read %s: %w", p, rd.err)
				}
				return permanent(err)
			}
			return nil
		})
	})
}

// watchedReader remembers the error of a read that failed (not io.EOF).
type watchedReader struct {
	r   io.Reader
	err error
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// session connects, authenticates and runs fn, all within timeout: the
// connection's deadline cuts a server that accepts and then hangs.
func (s *SFTP) session(ctx context.Context, r Remote, timeout time.Duration, fn func(*sftp.Client) error) error {
	endpoint := Endpoint(r.Host, r.Port)
	if r.User == "" {
		// Not even a connection: the server would refuse "" anyway, and
		// each retry would count against the switch at its end.
		return permanent(fmt.Errorf("no user to log in to %s as: set the ConfigArchiveServer's Username", endpoint))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", endpoint)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // cancellation too
	defer stop()
	cfg := &ssh.ClientConfig{
		User: r.User,
		Auth: []ssh.AuthMethod{
			ssh.Password(r.Password),
			ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = r.Password
				}
				return answers, nil
			}),
		},
		HostKeyCallback: s.Pins.Callback(endpoint),
		Timeout:         timeout,
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, endpoint, cfg)
	if err != nil {
		conn.Close()
		switch {
		case errors.Is(err, ErrHostKeyChanged):
			return permanent(err)
		case isAuthFailure(err):
			return permanent(fmt.Errorf("%w (%s as %q)", ErrAuth, endpoint, r.User))
		case ctx.Err() != nil:
			return fmt.Errorf("ssh to %s: no answer within %s", endpoint, timeout)
		}
		return fmt.Errorf("ssh to %s: %w", endpoint, err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	c, err := sftp.NewClient(client)
	if err != nil {
		return fmt.Errorf("sftp on %s: %w", endpoint, err)
	}
	defer c.Close()
	if err := fn(c); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("sftp on %s: did not finish within %s: %w", endpoint, timeout, err)
		}
		return err
	}
	return nil
}

func isAuthFailure(err error) bool {
	var se *ssh.ServerAuthError
	if errors.As(err, &se) {
		return true
	}
	// x/crypto reports exhausted methods as a plain error.
	return err != nil && strings.Contains(err.Error(), "unable to authenticate")
}

type permanentError struct{ error }

func (p permanentError) Unwrap() error { return p.error }

// permanent marks an error that another attempt would only repeat.
func permanent(err error) error { return permanentError{err} }

// IsPermanent reports whether err will not go away by retrying.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

func retry(ctx context.Context, a Attempts, fn func(context.Context) error) error {
	backoff := a.Backoff
	if backoff <= 0 {
		backoff = time.Second
	}
	if a.Timeout <= 0 {
		a.Timeout = 30 * time.Second
	}
	var err error
	for attempt := 0; attempt <= a.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (then: %v)", err, ctx.Err())
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
		}
		if err = fn(ctx); err == nil || IsPermanent(err) || ctx.Err() != nil {
			return err
		}
		if a.OnRetry != nil && attempt < a.Retries {
			a.OnRetry(attempt+1, err)
		}
	}
	if a.Retries > 0 {
		return fmt.Errorf("%d attempts failed; the last: %w", a.Retries+1, err)
	}
	return err
}
