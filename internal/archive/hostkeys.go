package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/datadir"
)

// ErrHostKeyChanged refuses a server whose key differs from the pinned one.
var ErrHostKeyChanged = errors.New("the server's host key changed since it was pinned")

// PinnedKey is a host key trusted on first use.
type PinnedKey struct {
	Key         string // authorized_keys form
	Fingerprint string // SHA256:...
	Pinned      time.Time
}

// HostKeys pins SSH host keys per host:port on first use, in a file of the
// data directory (mode 0600).
type HostKeys struct {
	path string
	mu   sync.Mutex
	keys map[string]PinnedKey
}

// OpenHostKeys loads the pins kept in path ("" keeps them in memory). A
// file that does not parse is moved aside (damaged says where) and no key
// is pinned: each server's is pinned again on its next connection, as when
// the file is deleted.
func OpenHostKeys(path string) (h *HostKeys, damaged *datadir.Damaged, err error) {
	h = &HostKeys{path: path, keys: map[string]PinnedKey{}}
	if path == "" {
		return h, nil, nil
	}
	if damaged, err = datadir.LoadState(path, &h.keys); err != nil {
		return nil, nil, fmt.Errorf("read pinned host keys: %w", err)
	}
	if h.keys == nil {
		h.keys = map[string]PinnedKey{}
	}
	return h, damaged, nil
}

// Endpoint names host:port as pins are kept.
func Endpoint(host string, port int) string {
	if port == 0 {
		port = DefaultSFTPPort
	}
	return net.JoinHostPort(strings.ToLower(host), fmt.Sprint(port))
}

// Get returns the key pinned for an endpoint.
func (h *HostKeys) Get(endpoint string) (PinnedKey, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k, ok := h.keys[endpoint]
	return k, ok
}

// Forget drops an endpoint's pin: the next connection pins anew (after its
// ConfigArchiveServer was updated).
func (h *HostKeys) Forget(endpoint string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.keys[endpoint]; !ok {
		return nil
	}
	delete(h.keys, endpoint)
	return h.saveLocked()
}

func (h *HostKeys) saveLocked() error {
	if h.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(h.keys, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Replace(h.path, data, 0o600)
}

// Callback checks a server's key against the pin of endpoint, pinning it
// when there is none.
func (h *HostKeys) Callback(endpoint string) ssh.HostKeyCallback {
	return func(_ string, _ net.Addr, key ssh.PublicKey) error {
		line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
		fp := ssh.FingerprintSHA256(key)
		h.mu.Lock()
		defer h.mu.Unlock()
		if pin, ok := h.keys[endpoint]; ok {
			if pin.Key != line {
				return fmt.Errorf("%w: %s presented %s, pinned %s; update its ConfigArchiveServer to accept the new key", ErrHostKeyChanged, endpoint, fp, pin.Fingerprint)
			}
			return nil
		}
		h.keys[endpoint] = PinnedKey{Key: line, Fingerprint: fp, Pinned: time.Now().UTC()}
		if err := h.saveLocked(); err != nil {
			delete(h.keys, endpoint)
			return fmt.Errorf("pin the host key of %s: %w", endpoint, err)
		}
		return nil
	}
}
