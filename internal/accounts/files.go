package accounts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
)

// Files keeps accounts in passwd, shadow, group and gshadow files of the
// /etc format in a directory of its own: the simulated switch's accounts. It
// makes hashes itself. Every change rewrites the files it touches
// atomically (a temporary file, fsync, rename, fsync of the directory); if
// one of several files cannot be replaced, those already replaced are put
// back.
type Files struct {
	dir    string
	scheme Scheme
	now    func() time.Time
	m      matcher

	mu  sync.Mutex          // serialises changes
	cur atomic.Pointer[etc] // the files as on disk; never modified in place

	// replaceHook, if set, runs before each file is replaced; an error fails
	// the change there. Tests use it to check all-or-nothing.
	replaceHook func(name string) error
}

// FilesOptions configure Files.
type FilesOptions struct {
	Scheme Scheme           // hashes to make; default Yescrypt
	Now    func() time.Time // clock for shadow dates; default time.Now
}

// OpenFiles opens the account files in dir, making the directory (mode
// 0700) and a minimal set of files (root, and the group users) on first use.
func OpenFiles(dir string, opts FilesOptions) (*Files, error) {
	f := &Files{dir: dir, scheme: opts.Scheme, now: opts.Now}
	if f.scheme == "" {
		f.scheme = Yescrypt
	}
	if f.now == nil {
		f.now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("accounts directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, passwdFile)); errors.Is(err, os.ErrNotExist) {
		for _, name := range []string{shadowFile, groupFile} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return nil, fmt.Errorf("%s is missing but %s is there: the account files are damaged, and making new ones would lose every account; restore them from a backup", filepath.Join(dir, passwdFile), name)
			}
		}
		seed := &etc{
			passwd:  table{{"root", "x", "0", "0", "root", "/root", "/bin/bash"}},
			shadow:  table{{"root", "*", daysNow(f.now()), "0", "99999", "7", "", "", ""}},
			group:   table{{"root", "x", "0", ""}, {"users", "x", "100", ""}},
			gshadow: table{{"root", "*", "", ""}, {"users", "*", "", ""}},
		}
		f.cur.Store(&etc{})
		if err := f.commit(seed); err != nil {
			return nil, fmt.Errorf("make account files in %s: %w", dir, err)
		}
	}
	e, err := readEtc(dir)
	if err != nil {
		return nil, err
	}
	if err := e.wellFormed(dir); err != nil {
		return nil, err
	}
	f.cur.Store(e)
	return f, nil
}

// Dir is the directory of the files.
func (f *Files) Dir() string { return f.dir }

// Create implements Accounts.
func (f *Files) Create(ctx context.Context, name, group, shell, password string) error {
	if err := checkCreate(name, group, shell, password); err != nil {
		return err
	}
	hash, err := Hash(password, f.scheme)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.cur.Load().clone()
	if next.passwd.find(name) >= 0 {
		return fmt.Errorf("%w: %s", ErrExists, name)
	}
	gid, ok := next.gid(group)
	if !ok {
		gid = nextID(next.group, 2)
		next.group = append(next.group, []string{group, "x", strconv.Itoa(gid), ""})
		next.gshadow = append(next.gshadow, []string{group, "!", "", ""})
	}
	uid := nextID(next.passwd, 2)
	next.passwd = append(next.passwd, []string{name, "x", strconv.Itoa(uid), strconv.Itoa(gid), "", "/home/" + name, shell})
	next.shadow = append(next.shadow, []string{name, hash, daysNow(f.now()), "0", "99999", "7", "", "", ""})
	return f.commit(next)
}

// SetShell implements Accounts.
func (f *Files) SetShell(ctx context.Context, name, shell string) error {
	if err := checkShell(shell); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.cur.Load().clone()
	i := next.passwd.find(name)
	if i < 0 || len(next.passwd[i]) < 7 {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	next.passwd[i][6] = shell
	return f.commit(next)
}

// SetPassword implements Accounts.
func (f *Files) SetPassword(ctx context.Context, name, password string) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	if _, ok, _ := f.Lookup(ctx, name); !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	hash, err := Hash(password, f.scheme)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.cur.Load().clone()
	if next.passwd.find(name) < 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	i := next.shadow.find(name)
	if i < 0 {
		next.shadow = append(next.shadow, []string{name, "", "", "0", "99999", "7", "", "", ""})
		i = len(next.shadow) - 1
	}
	for len(next.shadow[i]) < 9 {
		next.shadow[i] = append(next.shadow[i], "")
	}
	next.shadow[i][1], next.shadow[i][2] = hash, daysNow(f.now())
	return f.commit(next)
}

// Delete implements Accounts.
func (f *Files) Delete(ctx context.Context, name string) (*Removed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.cur.Load()
	a, ok := cur.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	next := cur.clone()
	r := &Removed{Account: a, member: next.supplementary(name)}
	i := next.passwd.find(name)
	r.passwd = next.passwd[i]
	next.passwd = next.passwd.without(i)
	if i := next.shadow.find(name); i >= 0 {
		r.shadow = next.shadow[i]
		next.shadow = next.shadow.without(i)
	}
	removeMember(next.group, 3, name)
	removeMember(next.gshadow, 2, name)
	removeMember(next.gshadow, 3, name)
	if a.GID > SystemGIDMax && next.groupEmpty(a.Group, a.GID) {
		if i := next.group.find(a.Group); i >= 0 {
			r.group = next.group[i]
			next.group = next.group.without(i)
		}
		if i := next.gshadow.find(a.Group); i >= 0 {
			r.gshadow = next.gshadow[i]
			next.gshadow = next.gshadow.without(i)
		}
	}
	if err := f.commit(next); err != nil {
		return nil, err
	}
	return r, nil
}

// Restore implements Accounts.
func (f *Files) Restore(ctx context.Context, r *Removed) error {
	if r == nil || len(r.passwd) < 7 {
		return fmt.Errorf("%w: nothing to restore", ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.cur.Load().clone()
	if next.passwd.find(r.Name) >= 0 {
		return fmt.Errorf("%w: %s", ErrExists, r.Name)
	}
	for _, p := range next.passwd {
		if len(p) > 2 && p[2] == r.passwd[2] {
			return fmt.Errorf("%w: uid %s of %s is now used by %s", ErrExists, r.passwd[2], r.Name, p[0])
		}
	}
	if r.group != nil && next.group.find(r.group[0]) < 0 {
		next.group = append(next.group, slices.Clone(r.group))
		if r.gshadow != nil {
			next.gshadow = append(next.gshadow, slices.Clone(r.gshadow))
		}
	}
	next.passwd = append(next.passwd, slices.Clone(r.passwd))
	if r.shadow != nil {
		next.shadow = append(next.shadow, slices.Clone(r.shadow))
	}
	for _, g := range r.member {
		addMember(next.group, 3, g, r.Name)
		addMember(next.gshadow, 3, g, r.Name)
	}
	return f.commit(next)
}

// Verify implements Accounts.
func (f *Files) Verify(ctx context.Context, name, password string) (bool, string, error) {
	cur := f.cur.Load()
	a, found := cur.lookup(name)
	hash, usable := cur.shadowHash(name, f.now())
	ok, err := f.m.match(hash, password)
	if err != nil || !found || !usable || !ok {
		return false, "", err
	}
	return true, a.Group, nil
}

// Lookup implements Accounts.
func (f *Files) Lookup(ctx context.Context, name string) (Account, bool, error) {
	a, ok := f.cur.Load().lookup(name)
	return a, ok, nil
}

// Members implements Accounts.
func (f *Files) Members(ctx context.Context, group string) ([]string, error) {
	return f.cur.Load().members(group), nil
}

// commit writes the files that differ between the current state and next,
// all or none, and makes next current.
func (f *Files) commit(next *etc) error {
	cur := f.cur.Load()
	type change struct {
		name     string
		tmp      string
		old, new []byte
	}
	var changes []change
	for _, name := range etcFiles {
		old, nw := cur.table(name).bytes(), next.table(name).bytes()
		if string(old) == string(nw) {
			continue
		}
		changes = append(changes, change{name: name, old: old, new: nw})
	}
	defer func() {
		for _, c := range changes {
			if c.tmp != "" {
				os.Remove(c.tmp)
			}
		}
	}()
	for i := range changes {
		tmp, err := atomicfile.WriteTemp(filepath.Join(f.dir, changes[i].name), changes[i].new, fileMode(changes[i].name))
		if err != nil {
			return err
		}
		changes[i].tmp = tmp
	}
	for i, c := range changes {
		err := error(nil)
		if f.replaceHook != nil {
			err = f.replaceHook(c.name)
		}
		if err == nil {
			err = os.Rename(c.tmp, filepath.Join(f.dir, c.name))
		}
		if err != nil {
			for _, done := range changes[:i] {
				if tmp, uerr := atomicfile.WriteTemp(filepath.Join(f.dir, done.name), done.old, fileMode(done.name)); uerr == nil {
					os.Rename(tmp, filepath.Join(f.dir, done.name))
				}
			}
			atomicfile.SyncDir(f.dir)
			return fmt.Errorf("replace %s: %w", filepath.Join(f.dir, c.name), err)
		}
		changes[i].tmp = ""
	}
	if err := atomicfile.SyncDir(f.dir); err != nil {
		return err
	}
	f.cur.Store(next)
	return nil
}

// fileMode is the mode of one of the account files: the shadow files are
// readable by root only.
func fileMode(name string) os.FileMode {
	if name == shadowFile || name == gshadowFile {
		return 0o600
	}
	return 0o644
}

// wellFormed checks files this package wrote: every line an entry with the
// right number of fields, root present. Garbage would otherwise be read
// as no accounts at all, and nobody could log in.
func (e *etc) wellFormed(dir string) error {
	for _, t := range []struct {
		name   string
		fields int
	}{{passwdFile, 7}, {shadowFile, 9}, {groupFile, 4}, {gshadowFile, 4}} {
		for i, entry := range *e.table(t.name) {
			if len(entry) != t.fields || entry[0] == "" {
				return fmt.Errorf("%s line %d: not an account entry (%d fields, want %d): the account files are damaged; restore them from a backup", filepath.Join(dir, t.name), i+1, len(entry), t.fields)
			}
		}
	}
	if e.passwd.find("root") < 0 {
		return fmt.Errorf("%s has no root entry: the account files are damaged; restore them from a backup", filepath.Join(dir, passwdFile))
	}
	return nil
}
