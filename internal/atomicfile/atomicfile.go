// Package atomicfile writes files so that a crash leaves either the old
// content or the new, never a mix, and a written file survives power loss:
// data is synced before it takes the file's name, and the directory is
// synced after.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// WriteNew creates path with data; it fails if path exists (a key, a
// generated password: never overwritten).
func WriteNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := finish(f, data); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// WriteTemp writes data to a synced temporary file next to path, with perm,
// and returns its name; the caller renames it over path (Commit), possibly
// together with others.
func WriteTemp(path string, data []byte, perm os.FileMode) (string, error) {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	// A leftover (a crash) is removed, and the new one is made exclusively
	// without following links: in a directory others can write (/tmp), a
	// link planted at the temporary name would otherwise make a root
	// process truncate and write the file it points to.
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("write %s: remove stale %s: %w", path, tmp, err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err == nil {
		err = f.Chmod(perm) // the umask may have narrowed it
		if err != nil {
			f.Close()
		} else {
			err = finish(f, data)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return tmp, nil
}

// Replace writes path's new content atomically, with perm.
func Replace(path string, data []byte, perm os.FileMode) error {
	tmp, err := WriteTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// ReplaceKeepingOwner is Replace for an existing file whose mode and owner
// must stay (a system file such as /etc/shadow).
func ReplaceKeepingOwner(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := WriteTemp(path, data, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if err := os.Chown(tmp, int(st.Uid), int(st.Gid)); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir makes the renames and creations in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func finish(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
