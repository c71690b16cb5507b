package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/debsig"
	"github.com/swmgr/swmgr/internal/gnoi"
)

// Values of --gnoi-os.
const (
	osSystem = "system" // Activate runs its carrier as a transient systemd unit
	osOff    = "off"    // OS is Unimplemented
)

// activationUnit is the transient unit that carries out an activation.
const activationUnit = "swmgr-activate.service"

// serviceUnit is the package's unit, which an activation restarts.
const serviceUnit = "swmgr.service"

// gnoiOS is the OS service's configuration, from the flags: the data
// directory's package directory and, under systemd, an activation carried
// out by `swmgr os-activate` in a transient unit.
func gnoiOS(o *serveOptions) (gnoi.OSOptions, error) {
	switch o.gnoi.os {
	case osOff:
		return gnoi.OSOptions{}, nil
	case osSystem:
	default:
		return gnoi.OSOptions{}, fmt.Errorf("--gnoi-os %q: use %s or %s", o.gnoi.os, osSystem, osOff)
	}
	oo := gnoi.OSOptions{Dir: filepath.Join(o.dataDir, datadir.Packages), Activate: systemdActivation, Deadline: o.gnoi.activateDeadline}
	if o.gnoi.signingKey != "" {
		key, err := debsig.LoadPublicKey(o.gnoi.signingKey)
		if err != nil {
			return gnoi.OSOptions{}, fmt.Errorf("--os-signing-key: %w", err)
		}
		oo.SigningKey = key
	}
	return oo, nil
}

// systemdActivation starts `swmgr os-activate` in a transient unit of its
// own (the package directory is <data-dir>/packages: the store is beside
// it), so that it outlives swmgr.service's restart (a process of
// swmgr.service's would be stopped with it) and runs outside its sandbox
// (dpkg writes /usr). The binary it runs is this one, the version known
// to work: dpkg replaces the file, not the running program.
func systemdActivation(ctx context.Context, dir string, a gnoi.Activation) error {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return fmt.Errorf("not running under systemd: swmgr cannot restart itself into a new version")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("this program's path: %w", err)
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	out, err := exec.CommandContext(ctx, "systemd-run", "--unit="+activationUnit, "--collect", "--quiet",
		"--description=swmgr: activate swmgr "+a.To+" (gNOI OS), or put "+a.From+" back",
		"--", exe, "os-activate", "--dir", dir, "--store", filepath.Join(filepath.Dir(dir), datadir.DB)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemd-run: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// stopService stops swmgr.service (under systemd), so that its store is
// closed.
func stopService(ctx context.Context) error {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "systemctl", "stop", serviceUnit).CombinedOutput(); err != nil {
		return fmt.Errorf("systemctl stop %s: %v: %s", serviceUnit, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// dpkgInstall installs a package (keeping an edited /etc/default/swmgr)
// and, under systemd, starts swmgr.service if the package's postinst did
// not (it restarts the service only when it runs, and one that failed
// too often is not started again until reset).
func dpkgInstall(ctx context.Context, deb string) error {
	cmd := exec.CommandContext(ctx, "dpkg", "-i", "--force-confdef", "--force-confold", deb)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg -i %s: %v: %s", filepath.Base(deb), err, strings.TrimSpace(string(out)))
	}
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return nil
	}
	if exec.CommandContext(ctx, "systemctl", "is-active", "--quiet", serviceUnit).Run() == nil {
		return nil
	}
	exec.CommandContext(ctx, "systemctl", "reset-failed", serviceUnit).Run()
	if out, err := exec.CommandContext(ctx, "systemctl", "start", "--no-block", serviceUnit).CombinedOutput(); err != nil {
		return fmt.Errorf("systemctl start %s: %v: %s", serviceUnit, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// osActivateCommand carries out the activation recorded in a package
// directory (gnoi.CarryOutActivation with dpkg): run by Activate in a
// transient unit, not by hand.
func osActivateCommand() *cobra.Command {
	var dir, store string
	var poll time.Duration
	cmd := &cobra.Command{
		Use:    "os-activate",
		Short:  "Carry out a gNOI OS activation: install the new package, wait for it to be ready, else put the previous one back",
		Args:   cobra.NoArgs,
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			c := gnoi.Carrier{Install: dpkgInstall, Poll: poll, Log: log}
			if store != "" {
				c.Store, c.Stop = store, stopService
			}
			a, err := gnoi.CarryOutActivation(ctx, dir, c)
			if err != nil {
				return err
			}
			if a.Message != "" {
				return fmt.Errorf("%s", a.Message)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", filepath.Join(defaultDataDir(), datadir.Packages), "the package directory")
	cmd.Flags().StringVar(&store, "store", "", "the service's store, copied before the new version runs and put back with the previous one (\"\": not kept)")
	cmd.Flags().DurationVar(&poll, "poll", time.Second, "how often to look for the new swmgr's word that it is ready")
	return cmd
}

// resumeActivation starts the carrier of an activation again when a
// reboot ended it (gnoi.ResumeInterrupted): run at start, before this
// swmgr is ready, so that the activation is resolved now, not left
// pending past its deadline.
func resumeActivation(ctx context.Context, o *serveOptions, log *slog.Logger) {
	if o.gnoi.os != osSystem {
		return
	}
	dir := filepath.Join(o.dataDir, datadir.Packages)
	a, resumed, err := gnoi.ResumeInterrupted(dir, version(), gnoi.BootID(), time.Now())
	switch {
	case err != nil:
		log.Warn("os: cannot resume an activation a reboot interrupted", "err", err)
		return
	case !resumed:
		return
	}
	log.Warn("os: a reboot interrupted the activation: resuming it", "from", a.From, "to", a.To, "how", a.Resume)
	if err := systemdActivation(ctx, dir, a); err != nil {
		log.Error("os: cannot resume the activation", "to", a.To, "err", err)
	}
}

// confirmActivation tells the activation that installed this version, if
// one waits, that it is ready (called once swmgr serves).
func confirmActivation(o *serveOptions, log *slog.Logger) {
	ok, err := gnoi.ConfirmActivation(filepath.Join(o.dataDir, datadir.Packages), version())
	switch {
	case err != nil:
		log.Warn("os: cannot confirm the activation of this version", "err", err)
	case ok:
		log.Info("os: this version is ready: its activation is confirmed", "version", version())
	}
}
