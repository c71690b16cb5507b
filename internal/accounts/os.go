package accounts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
)

// OS manages the accounts of the operating system with its own tools
// (useradd, usermod, userdel, groupadd, groupdel, chpasswd), as root.
//
// With a Prefix the tools act on <Prefix>/etc instead of the host's /etc
// (their -P option); chpasswd has no -P, so under a prefix swmgr makes the
// hash itself and sets it with usermod -p. On the host, passwords go to
// chpasswd on its standard input, never on a command line; Debian's
// chpasswd writes yescrypt ($y$) hashes.
type OS struct {
	// Prefix is a root directory whose etc/ holds the account files; ""
	// is the host.
	Prefix string
	// Tools is the directory of the tools; "" looks in /usr/sbin,
	// /usr/bin, /sbin and /bin.
	Tools string
	// Scheme is the hash made under a Prefix; default Yescrypt.
	Scheme Scheme
	// Groups, if set, are the only primary groups an account is made in
	// or moved to (an allowlist: on a host, any other group may carry
	// privileges of its own, such as reading TLS keys with ssl-cert, or be
	// another user's private group); any other is ErrInvalid. Empty: any
	// group.
	Groups []string
	// Owner names the swmgr whose accounts these are (serve gives its data
	// directory's tag): the accounts it makes have the comment Marker,
	// a space and Owner (Comment), and Reconcile touches no other. Two
	// swmgr on one host, with two data directories, thus leave each
	// other's accounts alone. "" is the comment Marker alone.
	Owner string

	mu sync.Mutex // one change at a time: each is several tool runs
	m  matcher
}

// toolPath is where the tools are looked for when OS.Tools is "".
var toolPath = []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// ToolError is a tool that failed. Its message holds the tool's name, exit
// status and error output, never its arguments or input.
type ToolError struct {
	Tool   string
	Status int // exit status, -1 if it did not run or was killed
	Output string
}

func (e *ToolError) Error() string {
	if e.Status < 0 {
		return fmt.Sprintf("%s failed: %s", e.Tool, e.Output)
	}
	return fmt.Sprintf("%s failed (exit status %d): %s", e.Tool, e.Status, e.Output)
}

// Exit statuses of useradd/usermod/userdel/groupadd that mean something to us.
const (
	exitUserExists   = 9  // useradd: user name already in use
	exitNoUser       = 6  // usermod/userdel: no such user
	exitHomeNotFreed = 12 // userdel: could not remove the home directory
)

func (o *OS) etcDir() string {
	return filepath.Join(o.Prefix, "/etc")
}

func (o *OS) read() (*etc, error) {
	return readEtc(o.etcDir())
}

func (o *OS) tool(name string) (string, error) {
	if o.Tools != "" {
		return filepath.Join(o.Tools, name), nil
	}
	for _, dir := range toolPath {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", &ToolError{Tool: name, Status: -1, Output: "not found in " + strings.Join(toolPath, ", ")}
}

// run runs a tool with args (after -P <prefix> when prefixed) and stdin.
func (o *OS) run(ctx context.Context, stdin, name string, prefixed bool, args ...string) error {
	path, err := o.tool(name)
	if err != nil {
		return err
	}
	if prefixed && o.Prefix != "" {
		args = append([]string{"-P", o.Prefix}, args...)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"PATH=" + strings.Join(toolPath, ":"), "LC_ALL=C"}
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		te := &ToolError{Tool: name, Status: -1, Output: strings.TrimSpace(out.String())}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			te.Status = ee.ExitCode()
		} else if te.Output == "" {
			te.Output = err.Error()
		}
		return te
	}
	return nil
}

func status(err error) int {
	var te *ToolError
	if errors.As(err, &te) {
		return te.Status
	}
	return -1
}

// setPassword sets a password (host: chpasswd on stdin) or a hash (hashed
// true; chpasswd -e on stdin). Under a prefix both become usermod -p.
func (o *OS) setPassword(ctx context.Context, name, secret string, hashed bool) error {
	if o.Prefix == "" {
		args := []string{}
		if hashed {
			args = append(args, "-e")
		}
		return o.run(ctx, name+":"+secret+"\n", "chpasswd", false, args...)
	}
	hash := secret
	if !hashed {
		var err error
		if hash, err = Hash(secret, o.Scheme); err != nil {
			return err
		}
	}
	return o.run(ctx, "", "usermod", true, "-p", hash, name)
}

// Create implements Accounts.
func (o *OS) Create(ctx context.Context, name, group, shell, password string) error {
	return o.create(ctx, name, group, shell, password, false)
}

// HashPassword implements HashCreator.
func (o *OS) HashPassword(password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	return Hash(password, o.Scheme)
}

// CreateHashed implements HashCreator.
func (o *OS) CreateHashed(ctx context.Context, name, group, shell, hash string) error {
	return o.create(ctx, name, group, shell, hash, true)
}

func (o *OS) create(ctx context.Context, name, group, shell, secret string, hashed bool) error {
	checked := secret
	if hashed {
		checked = "hashed-password"
	}
	if err := checkCreate(name, group, shell, checked); err != nil {
		return err
	}
	if err := o.checkGroup(group); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e, err := o.read()
	if err != nil {
		return err
	}
	if _, ok := e.lookup(name); ok {
		return fmt.Errorf("%w: %s", ErrExists, name)
	}
	ctx = context.WithoutCancel(ctx) // a half-made account is worse than a slow request
	groupMade, err := o.makeAccount(ctx, e, name, group, shell)
	if err != nil {
		return err
	}
	if err := o.setPassword(ctx, name, secret, hashed); err != nil {
		o.undo(ctx, name, group, groupMade)
		return fmt.Errorf("set the password of %s: %w", name, err)
	}
	return nil
}

// checkGroup refuses a group outside Groups.
func (o *OS) checkGroup(group string) error {
	if len(o.Groups) == 0 || slices.Contains(o.Groups, group) {
		return nil
	}
	return fmt.Errorf("%w: group %q: a User of this host's accounts must be in one of the groups %s (any other group of the host may give powers beyond swmgr's roles)",
		ErrInvalid, group, strings.Join(o.Groups, ", "))
}

// makeAccount makes the account name, marked (Comment), with its home, a
// locked password (useradd leaves "!" in shadow) and primary group group,
// made first if e has none. On failure it leaves neither; groupMade says
// whether the group was made, for the caller's undo of a later step.
func (o *OS) makeAccount(ctx context.Context, e *etc, name, group, shell string) (groupMade bool, err error) {
	if _, ok := e.gid(group); !ok {
		if err := o.run(ctx, "", "groupadd", true, group); err != nil {
			return false, fmt.Errorf("make group %s: %w", group, err)
		}
		groupMade = true
	}
	if err := o.run(ctx, "", "useradd", true, "-m", "-c", o.Comment(), "-g", group, "-s", shell, name); err != nil {
		o.undo(ctx, "", group, groupMade)
		if status(err) == exitUserExists {
			return false, fmt.Errorf("%w: %s", ErrExists, name)
		}
		return false, fmt.Errorf("make account %s: %w", name, err)
	}
	return groupMade, nil
}

// Marker begins the comment (GECOS) field of the accounts OS makes
// (Comment).
const Marker = "swmgr"

// Comment is the comment (GECOS) field of the accounts o makes: Marker,
// then a space and Owner if o has one. Reconcile touches the accounts with
// this comment and no other account of the host.
func (o *OS) Comment() string {
	if o.Owner == "" {
		return Marker
	}
	return Marker + " " + o.Owner
}

// Reconcile implements Reconciler for the accounts this swmgr made (their
// comment is Comment), never another account of the host, nor one another
// swmgr made (another Owner's): a marked account
// that no User has is removed (a crash between useradd and the store's
// write leaves one), a missing one is made with a locked password (the
// password was never stored: set it with UserPassword), a wrong primary
// group or login shell is put right. A host account that swmgr did not make
// but that a User names is left as it is, and reported; so is the account of
// a User whose group is not in Groups.
func (o *OS) Reconcile(ctx context.Context, want []Account) ([]Repair, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, err := o.read()
	if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	wanted := make(map[string]Account, len(want))
	for _, w := range want {
		wanted[w.Name] = w
	}
	mine := o.Comment()
	var did []Repair
	for i := range e.passwd {
		name := e.passwd.field(i, 0)
		if _, ok := wanted[name]; ok || e.passwd.field(i, 4) != mine {
			continue
		}
		a, _ := e.lookup(name)
		if err := o.run(ctx, "", "userdel", true, "-r", name); err != nil && status(err) != exitHomeNotFreed {
			return did, fmt.Errorf("remove account %s, which no User has: %w", name, err)
		}
		gone := []string{name}
		if after, err := o.read(); err == nil && a.GID > SystemGIDMax {
			if _, still := after.gid(a.Group); still && after.groupEmpty(a.Group, a.GID) && !wantsGroup(want, a.Group) {
				if o.run(ctx, "", "groupdel", true, a.Group) == nil {
					gone = append(gone, a.Group)
				}
			}
		}
		scrubBackups(o.etcDir(), gone)
		did = append(did, Repair{Account: name, Did: "removed account " + name + ": swmgr made it and no User has it"})
	}
	if e, err = o.read(); err != nil {
		return did, err
	}
	for _, w := range want {
		a, ok := e.lookup(w.Name)
		if err := o.checkGroup(w.Group); err != nil {
			did = append(did, Repair{Account: w.Name, Did: "neither made nor changed account " + w.Name + ": " + err.Error()})
			continue
		}
		switch comment := e.passwd.field(e.passwd.find(w.Name), 4); {
		case !ok:
			if _, err := o.makeAccount(ctx, e, w.Name, w.Group, w.Shell); err != nil {
				return did, err
			}
			did = append(did, Repair{Account: w.Name, Did: "made account " + w.Name + " with a locked password: its User had none on this host (set it with the UserPassword action)"})
		case comment == Marker && o.Owner != "":
			// Marked by a swmgr before accounts carried their owner's tag:
			// this one's, as its User is stored here. It takes the tag.
			if err := o.run(ctx, "", "usermod", true, "-c", mine, w.Name); err != nil {
				return did, fmt.Errorf("mark account %s: %w", w.Name, err)
			}
			did = append(did, Repair{Account: w.Name, Did: "marked account " + w.Name + " as this swmgr's (comment " + mine + "): its User is stored here"})
			fallthrough
		case comment == mine:
			if a.Group != w.Group {
				gid, ok := e.gid(w.Group)
				if !ok {
					if err := o.run(ctx, "", "groupadd", true, w.Group); err != nil {
						return did, fmt.Errorf("make group %s: %w", w.Group, err)
					}
					if e, err = o.read(); err != nil {
						return did, err
					}
					if gid, ok = e.gid(w.Group); !ok {
						return did, fmt.Errorf("make group %s: groupadd left no entry", w.Group)
					}
				}
				if err := o.setPrimaryGroup(ctx, w.Name, gid); err != nil {
					return did, fmt.Errorf("set the group of %s: %w", w.Name, err)
				}
				did = append(did, Repair{Account: w.Name, Did: "set the primary group of " + w.Name + " to " + w.Group + " (was " + a.Group + ")"})
			}
			if a.Shell != w.Shell {
				if err := o.run(ctx, "", "usermod", true, "-s", w.Shell, w.Name); err != nil {
					return did, fmt.Errorf("set the shell of %s: %w", w.Name, err)
				}
				did = append(did, Repair{Account: w.Name, Did: "set the login shell of " + w.Name + " to " + w.Shell + " (was " + a.Shell + ")"})
			}
		default:
			did = append(did, Repair{Account: w.Name, Did: "left account " + w.Name + " as it is: a host account that this swmgr did not make has this User's name"})
		}
	}
	return did, nil
}

// wantsGroup says whether an account of want has group as its primary
// group.
func wantsGroup(want []Account, group string) bool {
	for _, w := range want {
		if w.Group == group {
			return true
		}
	}
	return false
}

// undo removes an account (if name is not "") and a group (if made) that a
// failed Create or Restore made, leaving no trace in the backups either.
func (o *OS) undo(ctx context.Context, name, group string, groupMade bool) {
	var gone []string
	if name != "" {
		o.run(ctx, "", "userdel", true, "-r", name)
		gone = append(gone, name)
	}
	if groupMade {
		o.run(ctx, "", "groupdel", true, group)
		gone = append(gone, group)
	}
	scrubBackups(o.etcDir(), gone)
}

// SetShell implements Accounts.
func (o *OS) SetShell(ctx context.Context, name, shell string) error {
	if err := checkShell(shell); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.run(context.WithoutCancel(ctx), "", "usermod", true, "-s", shell, name); err != nil {
		if status(err) == exitNoUser {
			return fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return fmt.Errorf("set the shell of %s: %w", name, err)
	}
	return nil
}

// SetPassword implements Accounts.
func (o *OS) SetPassword(ctx context.Context, name, password string) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e, err := o.read()
	if err != nil {
		return err
	}
	if _, ok := e.lookup(name); !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err := o.setPassword(context.WithoutCancel(ctx), name, password, false); err != nil {
		return fmt.Errorf("set the password of %s: %w", name, err)
	}
	return nil
}

// Delete implements Accounts.
func (o *OS) Delete(ctx context.Context, name string) (*Removed, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, err := o.read()
	if err != nil {
		return nil, err
	}
	a, ok := e.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	r := &Removed{Account: a, member: e.supplementary(name)}
	r.passwd = e.passwd[e.passwd.find(name)]
	if i := e.shadow.find(name); i >= 0 {
		r.shadow = e.shadow[i]
	}
	var groupLine, gshadowLine []string
	if i := e.group.find(a.Group); i >= 0 {
		groupLine = e.group[i]
	}
	if i := e.gshadow.find(a.Group); i >= 0 {
		gshadowLine = e.gshadow[i]
	}
	ctx = context.WithoutCancel(ctx)
	if err := o.run(ctx, "", "userdel", true, "-r", name); err != nil {
		switch status(err) {
		case exitNoUser:
			return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
		case exitHomeNotFreed: // the account is gone; its home was not
		default:
			return nil, fmt.Errorf("remove account %s: %w", name, err)
		}
	}
	gone := []string{name}
	after, err := o.read()
	if err != nil {
		scrubBackups(o.etcDir(), gone)
		return r, nil // the account is gone; its group stays
	}
	if _, still := after.gid(a.Group); !still {
		r.group, r.gshadow = groupLine, gshadowLine // userdel removed it (a user private group)
		gone = append(gone, a.Group)
	} else if a.GID > SystemGIDMax && after.groupEmpty(a.Group, a.GID) {
		if o.run(ctx, "", "groupdel", true, a.Group) == nil {
			r.group, r.gshadow = groupLine, gshadowLine
			gone = append(gone, a.Group)
		}
	}
	scrubBackups(o.etcDir(), gone)
	return r, nil
}

// backupFiles are the copies the tools keep of the files they change.
var backupFiles = []string{"passwd-", "shadow-", "group-", "gshadow-", "subuid-", "subgid-"}

// scrubBackups removes the entries of removed users and groups from the
// tools' backup files (shadow- would otherwise keep a deleted account's
// hash), keeping each file's owner and mode. It is best effort: a backup
// that cannot be rewritten is left as it is.
func scrubBackups(dir string, names []string) {
	for _, file := range backupFiles {
		path := filepath.Join(dir, file)
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		t := parseTable(data)
		changed := false
		for i := len(t) - 1; i >= 0; i-- {
			if slices.Contains(names, t[i][0]) {
				t = t.without(i)
				changed = true
			}
		}
		if file == "group-" || file == "gshadow-" {
			before := string(t.bytes())
			for _, n := range names {
				removeMember(t, 3, n)
				if file == "gshadow-" {
					removeMember(t, 2, n)
				}
			}
			changed = changed || before != string(t.bytes())
		}
		if changed {
			atomicfile.ReplaceKeepingOwner(path, t.bytes())
		}
	}
}

// setPrimaryGroup makes gid the primary group of account name. On the host
// that is usermod -g. Under a prefix (tests) usermod -P looks the group up
// on the host, by name or by number alike, and fails when the host happens
// to lack it, so the passwd entry under the prefix is changed as usermod
// would change it.
func (o *OS) setPrimaryGroup(ctx context.Context, name string, gid int) error {
	if o.Prefix == "" {
		return o.run(ctx, "", "usermod", false, "-g", strconv.Itoa(gid), name)
	}
	path := filepath.Join(o.etcDir(), passwdFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	t := parseTable(data)
	i := t.find(name)
	if i < 0 || len(t[i]) < 4 {
		return fmt.Errorf("no account %s in %s", name, path)
	}
	t[i][3] = strconv.Itoa(gid)
	return atomicfile.ReplaceKeepingOwner(path, t.bytes())
}

// Restore implements Accounts. The home directory is made anew, empty but
// for the skeleton files.
func (o *OS) Restore(ctx context.Context, r *Removed) error {
	if r == nil || len(r.passwd) < 7 {
		return fmt.Errorf("%w: nothing to restore", ErrInvalid)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e, err := o.read()
	if err != nil {
		return err
	}
	if _, ok := e.lookup(r.Name); ok {
		return fmt.Errorf("%w: %s", ErrExists, r.Name)
	}
	ctx = context.WithoutCancel(ctx)
	groupMade := false
	if _, ok := e.gid(r.Group); !ok {
		if r.group == nil {
			return fmt.Errorf("%w: group %s of %s is gone", ErrNotFound, r.Group, r.Name)
		}
		if err := o.run(ctx, "", "groupadd", true, "-g", strconv.Itoa(r.GID), r.Group); err != nil {
			return fmt.Errorf("restore group %s: %w", r.Group, err)
		}
		groupMade = true
	}
	fail := func(what string, err error) error {
		o.undo(ctx, r.Name, r.Group, groupMade)
		return fmt.Errorf("restore account %s: %s: %w", r.Name, what, err)
	}
	args := []string{"-m", "-u", strconv.Itoa(r.UID), "-g", r.Group, "-s", r.Shell, "-d", r.Home}
	if gecos := r.passwd[4]; gecos != "" {
		args = append(args, "-c", gecos)
	}
	if err := o.run(ctx, "", "useradd", true, append(args, r.Name)...); err != nil {
		o.undo(ctx, "", r.Group, groupMade)
		return fmt.Errorf("restore account %s: %w", r.Name, err)
	}
	if len(r.shadow) > 1 && r.shadow[1] != "" {
		if err := o.setPassword(ctx, r.Name, r.shadow[1], true); err != nil {
			return fail("password hash", err)
		}
	}
	if len(r.member) > 0 {
		if err := o.run(ctx, "", "usermod", true, "-a", "-G", strings.Join(r.member, ","), r.Name); err != nil {
			return fail("groups", err)
		}
	}
	return nil
}

// Verify implements Accounts. It reads the shadow file, so it needs root.
func (o *OS) Verify(ctx context.Context, name, password string) (bool, string, error) {
	e, err := o.read()
	if err != nil {
		return false, "", err
	}
	a, found := e.lookup(name)
	hash, usable := e.shadowHash(name, time.Now())
	ok, err := o.m.match(hash, password)
	if err != nil || !found || !usable || !ok {
		return false, "", err
	}
	return true, a.Group, nil
}

// Lookup implements Accounts.
func (o *OS) Lookup(ctx context.Context, name string) (Account, bool, error) {
	e, err := o.read()
	if err != nil {
		return Account{}, false, err
	}
	a, ok := e.lookup(name)
	return a, ok, nil
}

// Members implements Accounts.
func (o *OS) Members(ctx context.Context, group string) ([]string, error) {
	e, err := o.read()
	if err != nil {
		return nil, err
	}
	return e.members(group), nil
}
