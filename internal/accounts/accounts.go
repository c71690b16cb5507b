// Package accounts keeps the switch's user accounts: the user, shadow and
// group entries of an operating system, never swmgr's own store.
//
// Two implementations share the same file formats (passwd, shadow, group,
// gshadow):
//
//   - OS runs the system's own tools (useradd, usermod, userdel, groupadd,
//     groupdel, chpasswd) on the host, or on a copy of /etc under a root
//     prefix (-P) for tests;
//   - Files keeps the four files in a directory of its own (the simulated
//     switch's data directory), writing them atomically, so that everything
//     works without root.
//
// Passwords are checked against the shadow hash: yescrypt ($y$, what Debian's
// chpasswd writes) or sha512crypt ($6$). A password is never logged, never put
// on a command line, and never kept after the call that was given it.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-crypt/crypt"
	"github.com/go-crypt/crypt/algorithm"
	"github.com/go-crypt/crypt/algorithm/scrypt"
	"github.com/go-crypt/crypt/algorithm/shacrypt"
)

// Accounts manages user accounts. Every method is safe for concurrent use.
// A method that fails leaves the accounts as they were.
type Accounts interface {
	// Create makes the account name with primary group group (made if
	// missing), login shell shell (an absolute path) and password.
	Create(ctx context.Context, name, group, shell, password string) error
	// SetShell changes an account's login shell.
	SetShell(ctx context.Context, name, shell string) error
	// SetPassword changes an account's password.
	SetPassword(ctx context.Context, name, password string) error
	// Delete removes an account, its home directory and its primary group
	// if that is left empty and is not a system group. It returns what it
	// removed, so that Restore can undo it.
	Delete(ctx context.Context, name string) (*Removed, error)
	// Restore puts back an account Delete removed, with its password hash.
	Restore(ctx context.Context, r *Removed) error
	// Verify checks a password. It reports false, with no error, for an
	// unknown, locked or expired account, and takes about as long as for a
	// known one.
	Verify(ctx context.Context, name, password string) (ok bool, group string, err error)
	// Lookup returns an account.
	Lookup(ctx context.Context, name string) (Account, bool, error)
	// Members lists the accounts whose primary group is group.
	Members(ctx context.Context, group string) ([]string, error)
}

// HashCreator is Accounts that can create an account from a password hash
// made beforehand, so that the slow hashing (yescrypt: tens of
// milliseconds) runs before the caller's critical section, not inside it.
type HashCreator interface {
	// HashPassword checks a password and returns its hash in the scheme
	// the accounts use. It changes nothing.
	HashPassword(password string) (string, error)
	// CreateHashed is Create with the hash HashPassword returned.
	CreateHashed(ctx context.Context, name, group, shell, hash string) error
}

// Syncer is Accounts that may hold changes in memory before they reach
// disk (Files with WriteBehind). Only changes declared committed reach it:
// the caller (the engine) makes changes inside commits that may still fail.
type Syncer interface {
	// Settle says whether the changes made since the last Settle are
	// committed (Sync may write them) or undone (they are dropped).
	Settle(committed bool)
	// Sync returns once every change committed before it was called is
	// durable.
	Sync(ctx context.Context) error
}

// Reconciler is Accounts that can be made to match the store at start:
// all of them when they belong to swmgr alone (Files, the simulated
// switch's), only those this swmgr made on a host (OS, by their Comment).
type Reconciler interface {
	// Reconcile makes the accounts swmgr owns exactly want (name, group,
	// shell) and reports what it changed.
	Reconcile(ctx context.Context, want []Account) ([]Repair, error)
}

// Account is a user account, without its password hash.
type Account struct {
	Name  string
	UID   int
	GID   int
	Group string // the primary group's name
	Home  string
	Shell string
}

// Removed is what Delete took away: enough to put it back. It holds the
// password hash; it prints as the account name only.
type Removed struct {
	Account
	passwd  []string // the passwd entry's fields
	shadow  []string // the shadow entry's fields (with the hash)
	group   []string // the primary group's entry, if it was removed with the account
	gshadow []string
	member  []string // supplementary groups the account was a member of
}

// String names the account and nothing else (the hash is not printed).
func (r Removed) String() string { return "removed account " + r.Name }

// GoString is String, for %#v.
func (r Removed) GoString() string { return r.String() }

// Errors that callers may test for with errors.Is.
var (
	ErrExists   = errors.New("account exists")
	ErrNotFound = errors.New("no such account")
	ErrInvalid  = errors.New("invalid account data")
)

// MinPassword is the shortest password accepted.
const MinPassword = 8

// SystemGIDMax is the largest GID of a system group; a group at or below it
// (users, root, ...) is never removed with an account.
const SystemGIDMax = 999

// Scheme is a password hashing scheme for the hashes swmgr makes itself.
type Scheme string

const (
	// Yescrypt writes $y$ hashes with libxcrypt's default cost (N=4096, r=32),
	// as Debian's chpasswd does.
	Yescrypt Scheme = "yescrypt"
	// SHA512 writes $6$ (sha512crypt) hashes with 5000 rounds.
	SHA512 Scheme = "sha512"
)

var nameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// CheckName checks a user or group name against the POSIX portable rules
// (the form useradd accepts by default), which also keeps it from being
// read as a command-line option.
func CheckName(what, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: %s %q: use 1..32 of a-z, 0-9, '_' and '-', starting with a letter or '_'", ErrInvalid, what, name)
	}
	return nil
}

// CheckPassword checks that a password can be set: long enough and without
// control characters (chpasswd reads one "name:password" per line).
func CheckPassword(password string) error {
	if len(password) < MinPassword {
		return fmt.Errorf("%w: a password needs at least %d characters", ErrInvalid, MinPassword)
	}
	// Unicode category C (controls such as U+0085, format characters,
	// unassigned code points), as the model's rule: not only the C0 set.
	if strings.ContainsFunc(password, func(r rune) bool {
		return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
	}) || !utf8.ValidString(password) {
		return fmt.Errorf("%w: a password cannot hold control, format or unassigned characters (Unicode category C) or invalid UTF-8", ErrInvalid)
	}
	return nil
}

func checkShell(shell string) error {
	if !strings.HasPrefix(shell, "/") || strings.ContainsAny(shell, ":\n\x00") {
		return fmt.Errorf("%w: login shell %q: use an absolute path without ':'", ErrInvalid, shell)
	}
	return nil
}

// Hash makes a crypt(3) hash of password.
func Hash(password string, scheme Scheme) (string, error) {
	var (
		h   algorithm.Hash
		err error
	)
	switch scheme {
	case Yescrypt, "":
		h, err = scrypt.NewYescrypt(scrypt.WithLN(12), scrypt.WithR(32), scrypt.WithP(1))
	case SHA512:
		h, err = shacrypt.New(shacrypt.WithVariant(shacrypt.VariantSHA512), shacrypt.WithIterations(5000))
	default:
		return "", fmt.Errorf("%w: unknown hash scheme %q; use yescrypt or sha512", ErrInvalid, scheme)
	}
	if err != nil {
		return "", fmt.Errorf("password hasher: %w", err)
	}
	d, err := h.Hash(password)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return d.Encode(), nil
}

// matcher checks passwords against shadow hashes. Its zero value is ready.
type matcher struct {
	once    sync.Once
	decoder *crypt.Decoder
	dummy   algorithm.Digest // checked for unknown accounts, to take as long
	err     error
}

func (m *matcher) init() error {
	m.once.Do(func() {
		d := crypt.NewDecoder()
		if m.err = scrypt.RegisterDecoderYescrypt(d); m.err != nil {
			return
		}
		if m.err = shacrypt.RegisterDecoderSHA512(d); m.err != nil {
			return
		}
		m.decoder = d
		var h string
		if h, m.err = Hash("swmgr-no-such-account", Yescrypt); m.err != nil {
			return
		}
		m.dummy, m.err = d.Decode(h)
	})
	return m.err
}

// match reports whether password matches hash, a shadow password field. A
// locked ("!...") or empty field, or a scheme other than $y$ and $6$, never
// matches.
func (m *matcher) match(hash, password string) (bool, error) {
	if err := m.init(); err != nil {
		return false, err
	}
	if !strings.HasPrefix(hash, "$y$") && !strings.HasPrefix(hash, "$6$") {
		m.dummy.Match(password) // take as long as a real check
		return false, nil
	}
	d, err := m.decoder.Decode(hash)
	if err != nil {
		m.dummy.Match(password)
		return false, nil
	}
	return d.Match(password), nil
}

// LoginShell maps a User's DefaultShell to a login shell: Bash is
// /bin/bash, anything else (CLI) is cli, the program that runs `swmgr cli`.
func LoginShell(defaultShell, cli string) string {
	if defaultShell == "Bash" {
		return "/bin/bash"
	}
	return cli
}

func checkCreate(name, group, shell, password string) error {
	if err := CheckName("user name", name); err != nil {
		return err
	}
	if err := CheckName("group name", group); err != nil {
		return err
	}
	if err := checkShell(shell); err != nil {
		return err
	}
	return CheckPassword(password)
}
