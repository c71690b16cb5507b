// Package datadir declares the files swmgr keeps in its data directory:
// every package that makes one takes its name from here, and the one list
// of them (Files) is what a saved configuration may never be written over
// or read from (Check), so a new file cannot be missed. It also loads the
// small JSON state files of the directory, moving a damaged one aside
// instead of stopping the start (LoadState).
package datadir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// Names in the data directory.
const (
	DB                = "swmgr.db"                 // the store (bbolt)
	PID               = "swmgr.pid"                // the running swmgr's pid
	SecretKey         = "secret.key"               // the key that seals stored secrets
	TLSCert           = "tls-cert.pem"             // the HTTPS certificate
	TLSKey            = "tls-key.pem"              // its private key
	TLSClientCA       = "tls-client-ca.pem"        // the trust bundle client certificates are checked against (gNSI certz)
	TLSClientCRL      = "tls-client-crl.pem"       // the revocation lists of its CAs (gNSI certz)
	CertzProfiles     = "certz-profiles"           // gNSI certz's other profiles, a directory each
	InitialPassword   = "initial-admin-password"   // the first admin's password
	Accounts          = "accounts"                 // the simulated switch's passwd, shadow, group files
	Socket            = "swmgr.sock"               // the local CLI's Unix socket
	LinuxJournal      = "linux-apply.journal"      // the Linux backend's apply journal
	SavedState        = "saved-config.json"        // the last SaveConfig (state/SystemParam)
	ArchiveKnownHosts = "archive-known-hosts.json" // SSH host keys pinned for archive servers
	ArchiveState      = "archive-state.json"       // the ConfigArchiveServer schedule
	Uploads           = "uploads"                  // gNOI File's upload area
	Packages          = "packages"                 // gNOI OS's packages and its last activation
	ZTPState          = "ztp-state.json"           // zero-touch provisioning: armed, its attempts (ZtpState)
	IntentGit         = "intent-git"               // the intent's git repository cache
	// StartupConfig is the default saved configuration: SaveConfig's to
	// write, so it is not one of Files.
	StartupConfig = "startup-config"
)

// File is one of swmgr's own names in the data directory.
type File struct {
	Name string
	What string
}

// Files lists swmgr's own names in the data directory: files it keeps, and
// the accounts directory. A name followed by "." and more (swmgr.db.lock,
// archive-state.json.damaged-…) is swmgr's too.
func Files() []File {
	return []File{
		{DB, "the database"},
		{PID, "the pid file"},
		{SecretKey, "the secret key"},
		{TLSCert, "the HTTPS certificate"},
		{TLSKey, "the HTTPS private key"},
		{TLSClientCA, "the client certificates' trust bundle"},
		{TLSClientCRL, "the client certificates' revocation lists"},
		{CertzProfiles, "gNSI certz's profiles"},
		{InitialPassword, "the initial admin password"},
		{Accounts, "the switch's account files"},
		{Socket, "the CLI socket"},
		{LinuxJournal, "the Linux backend's journal"},
		{SavedState, "the record of the last save"},
		{ArchiveKnownHosts, "the archive servers' pinned host keys"},
		{ArchiveState, "the archive servers' schedule"},
		{Uploads, "gNOI File's upload area"},
		{Packages, "gNOI OS's packages"},
		{ZTPState, "the zero-touch provisioning's progress"},
		{IntentGit, "the intent's git repository cache"},
	}
}

// ErrOwnFile refuses a saved configuration's path that is one of swmgr's
// own files.
var ErrOwnFile = errors.New("is one of swmgr's own files in its data directory")

// Own reports what name, a path relative to the data directory, is when it
// is swmgr's: one of Files, a name under one of them, a name that starts
// with one of them and a dot, or a hidden name (temporary files).
func Own(name string) (what string, ok bool) {
	first, _, _ := strings.Cut(filepath.ToSlash(name), "/")
	if strings.HasPrefix(first, ".") {
		return "a hidden (temporary) file", true
	}
	for _, f := range Files() {
		if first == f.Name || strings.HasPrefix(first, f.Name+".") {
			return f.What, true
		}
	}
	return "", false
}

// Check refuses path, an absolute file path, when it is inside the data
// directory dir and Own: a saved configuration is never written over, nor
// read from, swmgr's own files. Symbolic links in the directories of path
// and in dir are followed, so a link to the data directory is inside it.
func Check(dir, path string) error {
	rel, ok := relative(dir, path)
	if !ok {
		return nil
	}
	if what, own := Own(rel); own {
		return fmt.Errorf("%s %w (%s); choose another name", path, ErrOwnFile, what)
	}
	return nil
}

// relative is path relative to dir when path is inside dir.
func relative(dir, path string) (string, bool) {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	dir = real(dir)
	p := filepath.Join(real(filepath.Dir(path)), filepath.Base(path))
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// Damaged is a state file that did not parse and was moved aside.
type Damaged struct {
	Path  string // the state file
	Aside string // where it is now
	Err   error  // why it did not parse
}

func (d *Damaged) Error() string {
	return fmt.Sprintf("%s did not parse (%v): moved it aside to %s and started without it", d.Path, d.Err, d.Aside)
}

// LoadState reads the JSON file path into v, which points to the state's
// zero value. A missing file leaves v as it is. A file that does not parse
// is moved aside to path.damaged-<UTC time> and reported as Damaged, v left
// zero: the caller warns and goes on with empty state (what a new data
// directory has), so a damaged state file never stops swmgr from starting.
// Any other error (the file cannot be read or moved) is returned as err.
func LoadState(path string, v any) (damaged *Damaged, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	perr := json.Unmarshal(data, v)
	if perr == nil {
		return nil, nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	aside := path + ".damaged-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, aside); err != nil {
		return nil, fmt.Errorf("%s does not parse (%v) and cannot be moved aside: %w; move or delete it, then start swmgr again", path, perr, err)
	}
	return &Damaged{Path: path, Aside: aside, Err: perr}, nil
}
