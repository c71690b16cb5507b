package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	spb "github.com/openconfig/gnoi/system"
	"github.com/spf13/pflag"

	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/gnoi"
	"github.com/swmgr/swmgr/internal/service"
)

// gnoiFlags choose whether gNOI is served on the gNMI port and what its
// Reboot does.
type gnoiFlags struct {
	off              bool          // --gnoi=false
	reboot           string        // system, record or off
	os               string        // system or off
	activateDeadline time.Duration // a new version's time to be ready
	signingKey       string        // the public key packages are signed with
}

// Values of --gnoi-reboot.
const (
	rebootSystem = "system" // systemctl reboot/poweroff/halt, under systemd
	rebootRecord = "record" // logged and counted, not carried out (tests)
	rebootOff    = "off"    // Reboot is Unimplemented
)

func addGNOIFlags(f *pflag.FlagSet, g *gnoiFlags) {
	f.BoolVar(&g.off, "no-gnoi", false, "do not serve gNOI (System, File, Healthz, OS) nor gNSI certz on the gNMI port")
	f.StringVar(&g.os, "gnoi-os", osSystem, "what gNOI's OS service does: system (Install keeps swmgr packages in the data directory; Activate installs one and restarts into it under systemd, putting the previous one back if it is not ready in time) or off (Unimplemented)")
	f.DurationVar(&g.activateDeadline, "gnoi-activate-deadline", gnoi.DefaultActivateDeadline, "how long a version OS.Activate installed has to be ready before the previous one is put back")
	f.StringVar(&g.signingKey, "os-signing-key", "", "a public key file (swmgr package keygen): OS.Install keeps, and Activate installs, only packages signed with it (swmgr package sign)")
	f.StringVar(&g.reboot, "gnoi-reboot", rebootSystem, "what gNOI's System.Reboot does: system (systemctl reboot, poweroff or halt; swmgr must run under systemd), record (logged, not carried out: tests) or off (Unimplemented)")
}

// newGNOI builds the gNOI services for the gNMI server: File reaches the
// data directory's saved configurations (/config, not swmgr's own files)
// and the upload area (/uploads); probes run in the switch's namespace;
// the debug bundle holds the daemons' logs; gNSI certz rotates the
// listeners' certificate files.
func newGNOI(o *serveOptions, svc *service.Service, log *slog.Logger) (*gnoi.Server, error) {
	g := o.gnoi
	if g.off {
		return nil, nil
	}
	var reboot gnoi.Rebooter
	switch g.reboot {
	case rebootSystem:
		reboot = systemReboot
	case rebootRecord:
		reboot = func(_ context.Context, method spb.RebootMethod, message string) error {
			log.Warn("reboot requested over gNOI: recorded, not carried out (--gnoi-reboot record)", "method", method.String(), "message", message)
			return nil
		}
	case rebootOff:
	default:
		return nil, fmt.Errorf("--gnoi-reboot %q: use %s, %s or %s", g.reboot, rebootSystem, rebootRecord, rebootOff)
	}
	var logDirs []string
	if o.backend == service.Linux {
		if o.daemons.bgp == "frr" {
			logDirs = append(logDirs, o.daemons.frrDir)
		}
		if o.daemons.ntp == "chrony" {
			logDirs = append(logDirs, o.daemons.chronyDir)
		}
		if o.daemons.lldp == "lldpd" {
			logDirs = append(logDirs, o.daemons.lldpDir)
		}
		if o.daemons.relay == "dhcrelay" {
			logDirs = append(logDirs, o.daemons.relayDir)
		}
	}
	osOpts, err := gnoiOS(o)
	if err != nil {
		return nil, err
	}
	certFiles := serverCertFiles(o)
	return gnoi.New(gnoi.Options{
		OS:   osOpts,
		Cert: &certFiles, CertProfiles: filepath.Join(o.dataDir, datadir.CertzProfiles),
		Engine: svc.Engine, Version: version(), Backend: svc.Backend, Daemons: svc.Daemons, Reboot: reboot,
		Netns: o.netns, ExecIn: svc.ExecIn, LogDirs: logDirs, Log: log,
		Areas: []gnoi.Area{
			{Name: "config", Dir: o.dataDir, Write: true, Flat: true, Refuse: func(name string) string {
				what, own := datadir.Own(name)
				if own {
					return what
				}
				return ""
			}},
			{Name: "uploads", Dir: filepath.Join(o.dataDir, datadir.Uploads), Write: true},
		},
	})
}

// systemReboot reboots, powers off or halts the machine through systemd,
// with the request's message.
func systemReboot(ctx context.Context, method spb.RebootMethod, message string) error {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return fmt.Errorf("not running under systemd: swmgr cannot reboot this machine")
	}
	verb := "reboot"
	switch method {
	case spb.RebootMethod_POWERDOWN:
		verb = "poweroff"
	case spb.RebootMethod_HALT:
		verb = "halt"
	}
	args := []string{verb}
	if message != "" {
		args = append(args, "--message="+message)
	}
	if out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("systemctl %s: %v: %s", verb, err, out)
	}
	return nil
}
