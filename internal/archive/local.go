package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/configfile"
)

// ErrNotConfigFile refuses to overwrite a file that is not a saved
// configuration: SaveConfig runs as root, and an operator may run it.
var ErrNotConfigFile = errors.New("the destination exists and is not a saved swmgr configuration; swmgr will not overwrite it")

// MaxFileSize bounds what a restore reads (configfile's bound).
const MaxFileSize = configfile.MaxFileSize

// forbiddenRoots are pseudo file systems a configuration never goes to.
var forbiddenRoots = []string{"/proc/", "/sys/", "/dev/"}

// WriteLocal writes data to path atomically (temporary file, fsync,
// rename, directory fsync), mode 0600. It refuses to replace anything but
// a file that looks like a saved configuration (looksSaved).
func WriteLocal(path string, data []byte) error {
	if err := CheckLocal(path); err != nil {
		return err
	}
	return atomicfile.Replace(path, data, 0o600)
}

// CheckLocal refuses what WriteLocal would: a destination that is not a
// saved configuration (ErrNotConfigFile) or whose directory does not
// exist. A dry run of SaveConfig calls it alone.
func CheckLocal(path string) error {
	if fi, err := os.Stat(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("write %s: %s is not a directory", path, filepath.Dir(path))
	}
	for _, root := range forbiddenRoots {
		if strings.HasPrefix(path, root) {
			return fmt.Errorf("%s: %w", path, ErrNotConfigFile)
		}
	}
	fi, err := os.Lstat(path)
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: %w", path, ErrNotConfigFile)
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("check %s: %w", path, err)
		}
		head := make([]byte, 64)
		n, _ := io.ReadFull(f, head)
		f.Close()
		if n > 0 && !looksSaved(head[:n]) {
			return fmt.Errorf("%s: %w", path, ErrNotConfigFile)
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("check %s: %w", path, err)
	}
	return nil
}

// looksSaved recognises the start of a saved configuration: the encrypted
// magic, or a JSON object whose first member is swmgr's "Format" or
// FlexSwitch's "ConfigData". Any other JSON (swmgr's own state files in the
// data directory, where an operator may save) is not one.
func looksSaved(head []byte) bool {
	if bytes.HasPrefix(head, []byte(configfile.Magic)) {
		return true
	}
	const space = " \t\r\n"
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head, space), []byte("{"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, space)
	return bytes.HasPrefix(rest, []byte(`"Format"`)) || bytes.HasPrefix(rest, []byte(`"ConfigData"`))
}

// OpenLocal opens a regular file of at most MaxFileSize bytes for reading.
// Anything else is refused at once: the open does not wait (O_NONBLOCK), so
// a FIFO with no writer cannot hold the caller, and a FIFO, device, socket
// or directory is refused by what it is.
func OpenLocal(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, describeType(fi.Mode()))
	}
	if fi.Size() > MaxFileSize {
		f.Close()
		return nil, fmt.Errorf("%s is %d bytes, larger than %d, the most a restore reads", path, fi.Size(), MaxFileSize)
	}
	return f, nil
}

// describeType names what a file that is not a regular one is.
func describeType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadLocal reads a regular file of at most MaxFileSize bytes (OpenLocal).
func ReadLocal(path string) ([]byte, error) {
	f, err := OpenLocal(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}
