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
// makes hashes itself. Writing rewrites the files that changed atomically
// (a temporary file, fsync, rename, fsync of the directory); if one of
// several files cannot be replaced, those already replaced are put back.
//
// By default every change is written before it returns. With WriteBehind,
// Create, CreateHashed, SetShell, Delete and Restore change the accounts in
// memory (Verify, Lookup and Members see the change at once), and only the
// changes the caller has since declared committed (Settle) are written, by
// Sync: the engine makes those calls inside its commits, which may still
// fail or be undone, and a change that reached the files without reaching
// the store would be "repaired" at the next start by Reconcile at the cost
// of what it cannot restore (a deleted account's password hash).
// SetPassword, which no commit of the engine covers, is committed at once
// and written before it returns.
type Files struct {
	dir         string
	scheme      Scheme
	now         func() time.Time
	writeBehind bool
	m           matcher

	mu  sync.Mutex          // serialises changes
	cur atomic.Pointer[etc] // the accounts with every change made; never modified in place
	// committed is cur as of the last Settle(true), with the password
	// changes made since: what Sync may write. Without WriteBehind it is
	// always cur. Changed under mu; never modified in place.
	committed atomic.Pointer[etc]

	syncMu  sync.Mutex // serialises writes of the files; taken after mu, never before
	written *etc       // the files as on disk (under syncMu)

	// replaceHook, if set, runs before each file is replaced; an error fails
	// the change there. Tests use it to check all-or-nothing.
	replaceHook func(name string) error
}

// FilesOptions configure Files.
type FilesOptions struct {
	Scheme Scheme           // hashes to make; default Yescrypt
	Now    func() time.Time // clock for shadow dates; default time.Now
	// WriteBehind makes changes in memory and leaves writing them, once
	// Settle declares them committed, to Sync (see Files): the engine's
	// single writer then does no file I/O for a User, and the commit's
	// answer waits for Sync instead.
	WriteBehind bool
}

// SwitchFilesOptions are the options `swmgr serve` opens the simulated
// switch's account files with: the default scheme (yescrypt, what Debian's
// own tools write) and written behind. The benchmarks that speak for serve
// open them the same way.
func SwitchFilesOptions() FilesOptions { return FilesOptions{WriteBehind: true} }

// OpenFiles opens the account files in dir, making the directory (mode
// 0700) and a minimal set of files (root, and the group users) on first use.
func OpenFiles(dir string, opts FilesOptions) (*Files, error) {
	f := &Files{dir: dir, scheme: opts.Scheme, now: opts.Now, writeBehind: opts.WriteBehind, written: &etc{}}
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
			shadow:  table{shadowEntry("root", "*", f.now())},
			group:   table{{"root", "x", "0", ""}, {"users", "x", "100", ""}},
			gshadow: table{{"root", "*", "", ""}, {"users", "*", "", ""}},
		}
		f.cur.Store(&etc{})
		f.committed.Store(f.cur.Load())
		if err := f.commitNow(seed); err != nil {
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
	f.committed.Store(e)
	f.written = e
	return f, nil
}

// Dir is the directory of the files.
func (f *Files) Dir() string { return f.dir }

// Create implements Accounts.
func (f *Files) Create(ctx context.Context, name, group, shell, password string) error {
	hash, err := f.HashPassword(password)
	if err != nil {
		return err
	}
	return f.CreateHashed(ctx, name, group, shell, hash)
}

// HashPassword implements HashCreator.
func (f *Files) HashPassword(password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	return Hash(password, f.scheme)
}

// CreateHashed implements HashCreator.
func (f *Files) CreateHashed(ctx context.Context, name, group, shell, hash string) error {
	if err := checkCreate(name, group, shell, "hashed-password"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.cur.Load().clone()
	if next.passwd.find(name) >= 0 {
		return fmt.Errorf("%w: %s", ErrExists, name)
	}
	next.addAccount(name, group, shell, hash, f.now())
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

// SetPassword implements Accounts. With WriteBehind, the change is made to
// the committed accounts (it is a durable step of its own, which no commit
// of the engine covers) and written with them before it returns; the
// accounts in memory get it too, unless a change not yet committed
// replaced the account's password there (a delete, a re-create: they come
// after this change). The account is looked for among the committed ones,
// as the store's Users are: one whose delete is not committed yet still
// has its password changed (kept if the delete is undone), one whose
// create is not committed yet is not found.
func (f *Files) SetPassword(ctx context.Context, name, password string) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	if f.committed.Load().passwd.find(name) < 0 { // before the slow hash
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	hash, err := Hash(password, f.scheme)
	if err != nil {
		return err
	}
	f.mu.Lock()
	base := f.committed.Load()
	next, was, ok := withPassword(base, name, hash, f.now())
	if !ok {
		f.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if !f.writeBehind {
		defer f.mu.Unlock()
		return f.commitNow(next)
	}
	// The action is answered once the password is on disk, but the write
	// happens outside f.mu: the changes of the engine's writer need not
	// wait for it.
	f.committed.Store(next)
	if cur := f.cur.Load(); cur == base {
		f.cur.Store(next)
	} else if samePassword(cur, base, name) {
		c, _, _ := withPassword(cur, name, hash, f.now())
		f.cur.Store(c)
	}
	f.mu.Unlock()
	err = f.Sync(ctx)
	if err != nil {
		f.putBackShadow(name, hash, was)
	}
	return err
}

// withPassword returns a copy of e in which name's password is hash,
// changed now, and name's shadow entry before (nil if there was none); ok
// is false, and e unchanged, when e has no account name.
func withPassword(e *etc, name, hash string, now time.Time) (next *etc, was []string, ok bool) {
	if e.passwd.find(name) < 0 {
		return e, nil, false
	}
	next = e.clone()
	i := next.shadow.find(name)
	if i < 0 {
		next.shadow = append(next.shadow, []string{name, "", "", "0", "99999", "7", "", "", ""})
		i = len(next.shadow) - 1
	} else {
		was = slices.Clone(next.shadow[i])
	}
	for len(next.shadow[i]) < 9 {
		next.shadow[i] = append(next.shadow[i], "")
	}
	next.shadow[i][1], next.shadow[i][2] = hash, daysNow(now)
	return next, was, true
}

// samePassword says whether name has an account in both a and b with the
// same shadow entry.
func samePassword(a, b *etc, name string) bool {
	if a.passwd.find(name) < 0 || b.passwd.find(name) < 0 {
		return false
	}
	i, j := a.shadow.find(name), b.shadow.find(name)
	if i < 0 || j < 0 {
		return i < 0 && j < 0
	}
	return slices.Equal(a.shadow[i], b.shadow[j])
}

// putBackShadow undoes a password change that could not be written: name's
// shadow entry becomes was again (none if was is nil) in the committed
// accounts and in memory, wherever the entry still holds hash (not changed
// since).
func (f *Files) putBackShadow(name, hash string, was []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range []*atomic.Pointer[etc]{&f.committed, &f.cur} {
		back := p.Load().clone()
		i := back.shadow.find(name)
		if i < 0 || back.shadow.field(i, 1) != hash {
			continue
		}
		if was == nil {
			back.shadow = back.shadow.without(i)
		} else {
			back.shadow[i] = was
		}
		p.Store(back)
	}
}

// Settle is told, after the changes made since the last Settle, whether
// they are committed (the engine's store has them): then Sync may write
// them. If not (the commit was undone), the accounts in memory go back to
// the committed ones, whatever the undo left. Without WriteBehind every
// change is written and committed at once, and Settle does nothing.
func (f *Files) Settle(committed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if committed {
		f.committed.Store(f.cur.Load())
	} else {
		f.cur.Store(f.committed.Load())
	}
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
	r := next.remove(a)
	if err := f.commit(next); err != nil {
		return nil, err
	}
	return r, nil
}

// Repair is one thing Reconcile changed.
type Repair struct {
	Account string // the account's name
	Did     string // what was done, for the log
}

// Reconcile makes the accounts those of want and no others, as the store's
// Users say, and writes them at once: an account that is missing is made
// with its group and shell and a locked password (the password was never
// stored: set it again with the UserPassword action); a wrong primary group
// or login shell is put right; an account (UID above SystemGIDMax) that no
// User has is removed, with its group if that is left empty. It returns
// what it changed; nothing, when the accounts were right. It runs at start,
// before any change: the accounts in memory are the committed ones.
func (f *Files) Reconcile(ctx context.Context, want []Account) ([]Repair, error) {
	for _, w := range want {
		if err := CheckName("user name", w.Name); err != nil {
			return nil, err
		}
		if err := CheckName("group name", w.Group); err != nil {
			return nil, err
		}
		if err := checkShell(w.Shell); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.cur.Load()
	next := cur.clone()
	var did []Repair
	note := func(name, format string, args ...any) {
		did = append(did, Repair{Account: name, Did: fmt.Sprintf(format, args...)})
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
		a, ok := next.lookup(w.Name)
		if !ok {
			if i := next.shadow.find(w.Name); i >= 0 {
				next.shadow = next.shadow.without(i)
			}
			next.addAccount(w.Name, w.Group, w.Shell, lockedHash, f.now())
			note(w.Name, "made the missing account %s (group %s) with a locked password: set it with the UserPassword action", w.Name, w.Group)
			continue
		}
		i := next.passwd.find(w.Name)
		if a.Group != w.Group {
			next.passwd[i][3] = strconv.Itoa(next.ensureGroup(w.Group))
			next.dropGroupIfEmpty(a.Group, a.GID, nil)
			note(w.Name, "moved account %s from group %s to %s", w.Name, a.Group, w.Group)
		}
		if a.Shell != w.Shell {
			next.passwd[i][6] = w.Shell
			note(w.Name, "set the login shell of account %s to %s (was %s)", w.Name, w.Shell, a.Shell)
		}
		if next.shadow.find(w.Name) < 0 {
			next.shadow = append(next.shadow, shadowEntry(w.Name, lockedHash, f.now()))
			note(w.Name, "gave account %s, which had no shadow entry, a locked password: set it with the UserPassword action", w.Name)
		}
	}
	for _, p := range cur.passwd {
		if len(p) < 7 || wanted[p[0]] {
			continue
		}
		if uid, err := strconv.Atoi(p[2]); err != nil || uid <= SystemGIDMax {
			continue // root and other system accounts are the switch's own
		}
		a, _ := next.lookup(p[0])
		next.remove(a)
		note(p[0], "removed account %s, which no User has", p[0])
	}
	if len(did) == 0 {
		return nil, nil
	}
	if err := f.commitNow(next); err != nil {
		return nil, err
	}
	return did, nil
}

// lockedHash is a shadow password field that matches no password.
const lockedHash = "!"

// shadowEntry is the shadow line of name with the password hash, changed
// now.
func shadowEntry(name, hash string, now time.Time) []string {
	return []string{name, hash, daysNow(now), "0", "99999", "7", "", "", ""}
}

// addAccount adds the account name with its primary group (made if
// missing), its login shell and its password hash.
func (e *etc) addAccount(name, group, shell, hash string, now time.Time) {
	gid := e.ensureGroup(group)
	uid := nextID(e.passwd, 2)
	e.passwd = append(e.passwd, []string{name, "x", strconv.Itoa(uid), strconv.Itoa(gid), "", "/home/" + name, shell})
	e.shadow = append(e.shadow, shadowEntry(name, hash, now))
}

// ensureGroup returns the id of group, making the group if it is missing.
func (e *etc) ensureGroup(group string) int {
	if gid, ok := e.gid(group); ok {
		return gid
	}
	gid := nextID(e.group, 2)
	e.group = append(e.group, []string{group, "x", strconv.Itoa(gid), ""})
	e.gshadow = append(e.gshadow, []string{group, "!", "", ""})
	return gid
}

// remove takes account a out of e, with its primary group when that is
// left empty and is not a system group, and returns what it took.
func (e *etc) remove(a Account) *Removed {
	name := a.Name
	r := &Removed{Account: a, member: e.supplementary(name)}
	i := e.passwd.find(name)
	r.passwd = e.passwd[i]
	e.passwd = e.passwd.without(i)
	if i := e.shadow.find(name); i >= 0 {
		r.shadow = e.shadow[i]
		e.shadow = e.shadow.without(i)
	}
	removeMember(e.group, 3, name)
	removeMember(e.gshadow, 2, name)
	removeMember(e.gshadow, 3, name)
	e.dropGroupIfEmpty(a.Group, a.GID, r)
	return r
}

// dropGroupIfEmpty removes group (id gid) when it is not a system group and
// nothing uses it any more; r, if not nil, keeps what was removed.
func (e *etc) dropGroupIfEmpty(group string, gid int, r *Removed) {
	if gid <= SystemGIDMax || !e.groupEmpty(group, gid) {
		return
	}
	if i := e.group.find(group); i >= 0 {
		if r != nil {
			r.group = e.group[i]
		}
		e.group = e.group.without(i)
	}
	if i := e.gshadow.find(group); i >= 0 {
		if r != nil {
			r.gshadow = e.gshadow[i]
		}
		e.gshadow = e.gshadow.without(i)
	}
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
	shadow := r.shadow
	if c := f.committed.Load(); c.passwd.field(c.passwd.find(r.Name), 2) == r.passwd[2] {
		// The undo of a delete not committed yet: the committed account's
		// password is the one to keep, should SetPassword have changed it
		// since the delete.
		if i := c.shadow.find(r.Name); i >= 0 {
			shadow = c.shadow[i]
		}
	}
	if shadow != nil {
		next.shadow = append(next.shadow, slices.Clone(shadow))
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

// commit makes next the accounts: at once in memory with WriteBehind (Sync
// writes it), else written first. The caller holds f.mu.
func (f *Files) commit(next *etc) error {
	if f.writeBehind {
		f.cur.Store(next)
		return nil
	}
	return f.commitNow(next)
}

// commitNow writes next to the files, with any committed change not
// written yet, and then makes it the accounts, committed; if the write
// fails, nothing changes. The caller holds f.mu.
func (f *Files) commitNow(next *etc) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if err := f.write(f.written, next); err != nil {
		return err
	}
	f.written = next
	f.cur.Store(next)
	f.committed.Store(next)
	return nil
}

// Sync writes the committed accounts (WriteBehind: see Settle) to the files
// and returns once they are on disk: every change committed before Sync was
// called is durable when it returns nil; a change not committed never
// reaches the files. Concurrent calls share one write. If the write fails,
// the files stay as they were and the next Sync tries again.
func (f *Files) Sync(ctx context.Context) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	committed := f.committed.Load()
	if committed == f.written {
		return nil
	}
	if err := f.write(f.written, committed); err != nil {
		return err
	}
	f.written = committed
	return nil
}

// write replaces the files that differ between cur (as on disk) and next,
// all or none. The caller holds f.syncMu.
func (f *Files) write(cur, next *etc) error {
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
	// The temporary files are written and synced side by side: the file
	// system commits their syncs together, where one after the other each
	// would wait for a journal commit of its own.
	errs := make([]error, len(changes))
	var wg sync.WaitGroup
	for i := range changes {
		wg.Go(func() {
			changes[i].tmp, errs[i] = atomicfile.WriteTemp(filepath.Join(f.dir, changes[i].name), changes[i].new, fileMode(changes[i].name))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
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
	return atomicfile.SyncDir(f.dir)
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
