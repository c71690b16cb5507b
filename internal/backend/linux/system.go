package linux

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/model"
)

// SystemParam on the Linux backend: Hostname is the kernel's host name and
// /etc/hostname (both, each replaced atomically, and both put back if
// the batch fails), Timezone is /etc/localtime (a symbolic link into the
// tz database, replaced by a rename) and Debian's /etc/timezone. The
// stored Hostname is applied at start too: swmgr owns the switch's name.

// SystemOptions place the host settings SystemParam manages.
type SystemOptions struct {
	// EtcDir holds hostname, localtime and timezone; default /etc.
	EtcDir string
	// ZoneinfoDir is the tz database; default /usr/share/zoneinfo.
	ZoneinfoDir string
	// UTSNamespace is the path of the UTS namespace whose host name is set
	// (tests); "" is swmgr's own.
	UTSNamespace string
}

func (o *SystemOptions) defaults() {
	if o.EtcDir == "" {
		o.EtcDir = "/etc"
	}
	if o.ZoneinfoDir == "" {
		o.ZoneinfoDir = "/usr/share/zoneinfo"
	}
}

// inUTS runs fn on a thread that has joined the configured UTS namespace;
// the thread is discarded afterwards (it is never unlocked).
func (o *SystemOptions) inUTS(fn func() error) error {
	if o.UTSNamespace == "" {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f, err := os.Open(o.UTSNamespace)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWUTS); err != nil {
			done <- fmt.Errorf("join UTS namespace %s: %w", o.UTSNamespace, err)
			return
		}
		done <- fn()
	}()
	return <-done
}

// Hostname is the kernel's host name as the switch sees it.
func (o *SystemOptions) Hostname() (string, error) {
	var name string
	err := o.inUTS(func() error {
		var u unix.Utsname
		if err := unix.Uname(&u); err != nil {
			return err
		}
		name = unix.ByteSliceToString(u.Nodename[:])
		return nil
	})
	return name, err
}

func (o *SystemOptions) setKernelHostname(name string) error {
	return o.inUTS(func() error { return unix.Sethostname([]byte(name)) })
}

// readOptional is a file's content, or ok=false when it does not exist.
func readOptional(path string) (string, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// restoreFile puts back what readOptional returned.
func restoreFile(path, content string, existed bool) error {
	if !existed {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return atomicfile.Replace(path, []byte(content), 0o644)
}

func (b *Backend) setHostname(tx *Tx, name string) error {
	o := b.opts.System
	oldKernel, err := o.Hostname()
	if err != nil {
		return fmt.Errorf("read the host name: %w", err)
	}
	path := filepath.Join(o.EtcDir, "hostname")
	oldFile, existed, err := readOptional(path)
	if err != nil {
		return err
	}
	if oldKernel != name {
		if err := tx.change("set the kernel's host name to "+name, func() error { return o.setKernelHostname(name) },
			func() error { return o.setKernelHostname(oldKernel) }); err != nil {
			return err
		}
	}
	if strings.TrimSpace(oldFile) != name {
		if err := tx.change("write "+path, func() error { return atomicfile.Replace(path, []byte(name+"\n"), 0o644) },
			func() error { return restoreFile(path, oldFile, existed) }); err != nil {
			return err
		}
	}
	return nil
}

// zoneFile is tz's file in the tz database, or a refusal.
func (b *Backend) zoneFile(tz string) (string, error) {
	if tz == "" || strings.HasPrefix(tz, "/") || strings.Contains(tz, "..") {
		return "", refuse("Timezone", "Timezone %q is not a tz database name", tz)
	}
	p := filepath.Join(b.opts.System.ZoneinfoDir, tz)
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return "", refuse("Timezone", "Timezone %q is not in this switch's tz database (%s)", tz, b.opts.System.ZoneinfoDir)
	}
	return p, nil
}

func (b *Backend) setTimezone(tx *Tx, tz string) error {
	target, err := b.zoneFile(tz)
	if err != nil {
		return err
	}
	o := b.opts.System
	link := filepath.Join(o.EtcDir, "localtime")
	oldTarget, linkErr := os.Readlink(link)
	if linkErr != nil && !errors.Is(linkErr, os.ErrNotExist) {
		// A copy instead of a link: keep its content for the undo.
		if _, err := os.Lstat(link); err != nil {
			return err
		}
	}
	oldCopy, copyExisted, _ := readOptional(link)
	if oldTarget != target {
		replaceLink := func(to string) error {
			tmp := link + ".swmgr-tmp"
			os.Remove(tmp)
			if err := os.Symlink(to, tmp); err != nil {
				return err
			}
			return os.Rename(tmp, link)
		}
		undo := func() error {
			if linkErr == nil {
				return replaceLink(oldTarget)
			}
			return restoreFile(link, oldCopy, copyExisted)
		}
		if err := tx.change("link "+link+" to "+target, func() error { return replaceLink(target) }, undo); err != nil {
			return err
		}
	}
	path := filepath.Join(o.EtcDir, "timezone")
	oldFile, existed, err := readOptional(path)
	if err != nil {
		return err
	}
	if strings.TrimSpace(oldFile) != tz {
		return tx.change("write "+path, func() error { return atomicfile.Replace(path, []byte(tz+"\n"), 0o644) },
			func() error { return restoreFile(path, oldFile, existed) })
	}
	return nil
}

var systemDriver = &driver{
	check: func(b *Backend, c changeView) error {
		_, err := b.zoneFile(c.after().Str("Timezone"))
		return err
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		if h := after.Str("Hostname"); h != "" {
			if err := b.setHostname(tx, h); err != nil {
				return err
			}
			b.stageLLDPHostname(tx, h)
		}
		return b.setTimezone(tx, after.Str("Timezone"))
	},
	// SystemParam is a singleton: it is never deleted.
	remove: func(b *Backend, tx *Tx, before model.Object) error { return nil },
	state: func(b *Backend, o model.Object) (model.Object, error) {
		return model.Object{"Distro": distro(), "Kernel": b.kernelDescription(), "UpTime": hostUptime()}, nil
	},
}

// discoverSystem adds the host's name and time zone to the discovered
// SystemParam: on a new store they become the stored values, so the first
// start does not rename the switch to the model's default. (Later starts
// apply the stored values.)
func (b *Backend) discoverSystem(o model.Object) {
	sys := b.opts.System
	if h, err := sys.Hostname(); err == nil && hostnameRE.MatchString(h) {
		o["Hostname"] = h
	}
	tz := ""
	if t, err := os.Readlink(filepath.Join(sys.EtcDir, "localtime")); err == nil {
		if rel, err := filepath.Rel(sys.ZoneinfoDir, t); err == nil && !strings.HasPrefix(rel, "..") {
			tz = rel
		}
	}
	if tz == "" {
		if b, err := os.ReadFile(filepath.Join(sys.EtcDir, "timezone")); err == nil {
			tz = strings.TrimSpace(string(b))
		}
	}
	if _, err := b.zoneFile(tz); err == nil {
		if _, err := time.LoadLocation(tz); err == nil {
			o["Timezone"] = tz
		}
	}
}

var hostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`)

// distro is the host's PRETTY_NAME from os-release.
func distro() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return "Linux"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}

// hostUptime is how long the host has been up, as a Go duration.
func hostUptime() string {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return ""
	}
	return (time.Duration(secs) * time.Second).String()
}
