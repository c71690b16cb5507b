package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// Account is the user a daemon runs as, after it drops its privileges.
type Account struct {
	Name string
	UID  int
	GIDs []int // primary group first, then the supplementary ones
}

// LookupAccount resolves a user name and its groups.
func LookupAccount(name string) (Account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return Account{}, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return Account{}, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	a := Account{Name: name, UID: uid}
	gids := []string{u.Gid}
	if more, err := u.GroupIds(); err == nil {
		gids = append(gids, more...)
	}
	for _, g := range gids {
		if n, err := strconv.Atoi(g); err == nil {
			a.GIDs = append(a.GIDs, n)
		}
	}
	return a, nil
}

// SetUIDAccount is who a set-user-id program of user a (lldpcli, which
// is set-user-id _lldpd) is when swmgr runs it: a's user id with swmgr's
// own groups, which the kernel checks directories against.
func SetUIDAccount(a Account) Account {
	gids := []int{os.Getegid()}
	if more, err := os.Getgroups(); err == nil {
		gids = append(gids, more...)
	}
	return Account{Name: a.Name, UID: a.UID, GIDs: gids}
}

// MakeDir makes dir (and its missing parents) for a daemon that runs as
// reach: dir gets exactly mode and the owner uid:gid whatever swmgr's umask
// (systemd units run it with 0077), the parents it makes get 0755, and
// every directory above dir must let reach through.
//
// A directory above dir that does not is made traversable (the one x bit
// that applies to reach: others', or the group's when reach is in the
// directory's group, whose bits then decide; nothing more) when swmgr owns it: it made it now, or it is dir's own parent,
// swmgr's runtime directory (/run/swmgr by default), which an earlier
// start, a package or an administrator may have made 0750 or 0700. Any
// other one is an error that names it, its mode and owner, and the user
// that cannot pass: swmgr does not open up directories it does not own.
func MakeDir(dir string, mode fs.FileMode, uid, gid int, reach Account) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	made, err := mkdirParents(filepath.Dir(dir))
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if fi, err := os.Stat(dir); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	if err := os.Chmod(dir, mode); err != nil {
		return err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return err
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !canSearch(fi, reach) {
			if !made[p] && p != filepath.Dir(dir) {
				st := fi.Sys().(*syscall.Stat_t)
				return fmt.Errorf("the daemon's user %s cannot reach its directory %s: %s is mode %04o, owner %d:%d; make it traversable (chmod o+x %s) or choose a directory elsewhere",
					reach.Name, dir, p, fi.Mode().Perm(), st.Uid, st.Gid, p)
			}
			if err := os.Chmod(p, fi.Mode().Perm()|searchBit(fi, reach)); err != nil {
				return fmt.Errorf("make %s traversable for user %s: %w", p, reach.Name, err)
			}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// mkdirParents is os.MkdirAll with every directory it makes at mode 0755
// whatever the umask; it returns the directories it made.
func mkdirParents(dir string) (map[string]bool, error) {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("%s exists and is not a directory", p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	made := map[string]bool{}
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if err := os.Chmod(p, 0o755); err != nil {
			return nil, err
		}
		made[p] = true
	}
	return made, nil
}

// canSearch reports whether a may pass through the directory fi (the x
// bit that applies to it: owner, group or others; root passes anyway).
func canSearch(fi fs.FileInfo, a Account) bool {
	return a.UID == 0 || fi.Mode().Perm()&searchBit(fi, a) != 0
}

// searchBit is the x bit of fi's mode that decides whether a may pass:
// the owner's when a owns it, else the group's when one of a's groups is
// its group (its others' bit does not count then), else the others'.
func searchBit(fi fs.FileInfo, a Account) fs.FileMode {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0o001
	}
	if int(st.Uid) == a.UID {
		return 0o100
	}
	if slices.Contains(a.GIDs, int(st.Gid)) {
		return 0o010
	}
	return 0o001
}
