// Package archive moves saved configuration files: the URIs of the
// lifecycle actions, local atomic writes, SFTP uploads and downloads with a
// pinned host key, retries, and the ConfigArchiveServer scheduler. It knows
// nothing of the engine: it moves bytes that configfile made.
package archive

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/model"
)

// Location is a parsed file URI.
type Location struct {
	Remote bool   // sftp; else a local file
	User   string // sftp: "" for the ConfigArchiveServer's Username
	Host   string // sftp: an IP address or a host name
	Port   int    // sftp: 0 for the default
	Path   string // absolute and clean
}

// DefaultSFTPPort is SSH's port.
const DefaultSFTPPort = 22

// ErrBadURI is wrapped by every refusal of ParseURI.
var ErrBadURI = errors.New("bad file URI")

func badURI(format string, args ...any) error {
	return fmt.Errorf("%w: %s; use ///abs/path, file:///abs/path or sftp://[user@]host[:port]/abs/path", ErrBadURI, fmt.Sprintf(format, args...))
}

// ParseURI reads the file URIs of the contract: ///abs/path and
// file:///abs/path are local, sftp://[user@]host[:port]/path is remote.
// Other schemes, relative paths, ".." and passwords in the URI are refused.
func ParseURI(s string) (Location, error) {
	if s == "" {
		return Location{}, badURI("the URI is empty")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Location{}, badURI("the URI holds control characters")
	}
	switch {
	case strings.HasPrefix(s, "///"):
		return localPath(s[2:])
	case strings.HasPrefix(strings.ToLower(s), "file://"):
		rest := s[len("file://"):]
		if !strings.HasPrefix(rest, "/") {
			return Location{}, badURI("file://%s names a host; a local file is file:///abs/path", rest)
		}
		return localPath(rest)
	case strings.HasPrefix(strings.ToLower(s), "sftp://"):
		return sftpURI(s[len("sftp://"):])
	case strings.HasPrefix(s, "/"):
		return Location{}, badURI("%q has no scheme: write a local path as ///abs/path", s)
	}
	if i := strings.Index(s, "://"); i > 0 {
		return Location{}, badURI("the scheme %q is not supported", s[:i])
	}
	return Location{}, badURI("%q is a relative path", s)
}

func localPath(p string) (Location, error) {
	if err := checkPath(p, false); err != nil {
		return Location{}, err
	}
	return Location{Path: p}, nil
}

func checkPath(p string, remote bool) error {
	if why := model.CheckFilePath(p, remote); why != "" {
		return badURI("the path %q: %s", p, why)
	}
	return nil
}

func sftpURI(rest string) (Location, error) {
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return Location{}, badURI("sftp://%s has no path", rest)
	}
	authority, p := rest[:i], rest[i:]
	loc := Location{Remote: true}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		loc.User, authority = authority[:at], authority[at+1:]
		if strings.Contains(loc.User, ":") {
			return Location{}, badURI("a password does not belong in a URI (it would be logged); the ConfigArchiveServer of the host holds it")
		}
		if loc.User == "" || len(loc.User) > 64 || strings.ContainsAny(loc.User, "/@%") {
			return Location{}, badURI("the user %q is not a user name", loc.User)
		}
	}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") || strings.Count(authority, ":") == 1 {
		h, pt, err := net.SplitHostPort(authority)
		if err != nil {
			if !strings.HasPrefix(authority, "[") || !strings.HasSuffix(authority, "]") {
				return Location{}, badURI("%q is not host[:port]", authority)
			}
			h, pt = strings.TrimSuffix(strings.TrimPrefix(authority, "["), "]"), ""
		}
		host, port = h, pt
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Location{}, badURI("the port %q is not in 1..65535", port)
		}
		loc.Port = n
	}
	if !validHost(host) {
		return Location{}, badURI("%q is not an IP address or a host name", host)
	}
	loc.Host = host
	if err := checkPath(p, true); err != nil {
		return Location{}, err
	}
	loc.Path = p
	return loc, nil
}

func validHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// String renders a location as a URI.
func (l Location) String() string {
	if !l.Remote {
		return "file://" + l.Path
	}
	var b strings.Builder
	b.WriteString("sftp://")
	if l.User != "" {
		b.WriteString(l.User + "@")
	}
	host := l.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	b.WriteString(host)
	if l.Port != 0 {
		b.WriteString(":" + strconv.Itoa(l.Port))
	}
	b.WriteString(l.Path)
	return b.String()
}

// Timestamp modes of SaveConfig and ConfigArchiveServer.
const (
	TimestampDisabled = "disabled"
	TimestampAppend   = "append"
	TimestampPrepend  = "prepend"
)

// TimestampLayout is the UTC time put in file names: sortable, no colons.
const TimestampLayout = "20060102T150405Z"

// Stamp puts the time in the file name of p per mode: "name-<ts>" for
// append, "<ts>-name" for prepend.
func Stamp(p, mode string, t time.Time) string {
	ts := t.UTC().Format(TimestampLayout)
	dir, name := path.Split(p)
	switch mode {
	case TimestampAppend:
		return dir + name + "-" + ts
	case TimestampPrepend:
		return dir + ts + "-" + name
	}
	return p
}
