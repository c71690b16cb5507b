package cli

import (
	"fmt"

	"github.com/swmgr/swmgr/internal/model"
)

// shell is FlexSwitch's `shell`: bash on the switch, as the OS user the
// CLI runs as, until it exits. It is what a user whose login shell is the
// CLI could otherwise never get, so it is offered only:
//   - at a terminal on the switch itself (not in scripts, where it would
//     read the rest of the script, and not over --url, where it would be
//     a shell on the client's machine);
//   - in enable mode (`#`), as FlexSwitch had it;
//   - to root, or to a user whose account's shell field allows it
//     (model.Account: User's Access Bash). Access CLI (the default)
//     confines the user to the CLI.
//
// The shell runs with the CLI's own identity: it gives no right the
// account does not have.
func (s *Session) shell() error {
	if s.opts.Shell == nil {
		s.printf("ERROR: shell is available only at a terminal on the switch itself (not in scripts, not over --url)\n")
		return errFailed
	}
	if !s.opts.Root {
		if err := s.mayShell(s.opts.OSUser); err != nil {
			s.printf("ERROR: %v\n", err)
			return errFailed
		}
	}
	s.printf("Starting bash as %s; 'exit' returns to the CLI\n", s.opts.OSUser)
	if err := s.opts.Shell(s.ctx); err != nil {
		s.printf("shell: %v\n", err)
	}
	return nil
}

// mayShell reports why name may not have a shell, or nil.
func (s *Session) mayShell(name string) error {
	k, access, shellAccess := s.cat.userKind, s.cat.accessField, s.cat.shellAccess
	if k == nil || access == nil || name == "" {
		return fmt.Errorf("shell is not available: this server has no user access to check")
	}
	key := model.Object{k.Keys()[0].Name: name}
	u, found, err := s.getOne(s.api.Objects, k, key)
	switch {
	case err != nil:
		return fmt.Errorf("shell: cannot read the %s %s: %s", k.Name, name, errText(err))
	case !found:
		return fmt.Errorf("shell is not allowed: %s is not a %s of the switch", name, k.Name)
	case u.Str(access.Name) != shellAccess:
		return fmt.Errorf("shell is not allowed for %s (%s %s; an admin can set %s %s)", name, access.Name, display(u[access.Name]), access.Name, shellAccess)
	}
	return nil
}
