package frr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/daemon"
)

// Options place one FRR instance.
type Options struct {
	// Dir holds this instance's configuration files, vty sockets, pid files
	// and logs; it is created and handed to the FRR user. Never /etc/frr or
	// /run/frr: the host's own FRR, if any, is left alone.
	Dir string
	// Netns is the named network namespace the daemons run in ("" = the
	// caller's).
	Netns string
	// BinDir holds zebra, bgpd (and mgmtd/staticd on FRR releases that need
	// them); default /usr/lib/frr.
	BinDir string
	// User runs the daemons; default "frr" (created by Debian's package).
	User string
	// Log receives the daemons' starts, exits and restarts (nil: none).
	Log *slog.Logger
}

// Router is one FRR instance swmgr owns: its daemons and its BGP
// configuration.
type Router struct {
	opts  Options
	group *daemon.Group

	// applyMu serialises changes to FRR; current is the configuration last
	// applied successfully (what a restarted bgpd gets back).
	applyMu sync.Mutex
	current Config
	applies int
	// bfdBefore is bfdd's `bfd` node before the apply under way (nil:
	// not read).
	bfdBefore *bfdBlock
}

// daemonsFor lists the daemons FRR needs, in start order: mgmtd (FRR 9 and
// later) owns the northbound configuration others read, zebra owns the
// kernel, bgpd talks to zebra.
func daemonsFor(bin string) []string {
	var names []string
	if _, err := os.Stat(filepath.Join(bin, "mgmtd")); err == nil {
		names = append(names, "mgmtd")
	}
	names = append(names, "zebra")
	// bfdd runs the BFD sessions bgpd asks for (through zebra) and the
	// static ones; where it is not installed BFD is refused at apply.
	if _, err := os.Stat(filepath.Join(bin, "bfdd")); err == nil {
		names = append(names, "bfdd")
	}
	return append(names, "bgpd")
}

// New prepares an instance; Start runs it.
func New(opts Options) (*Router, error) {
	if opts.Dir == "" {
		return nil, errors.New("frr: Options.Dir is required")
	}
	if opts.BinDir == "" {
		opts.BinDir = "/usr/lib/frr"
	}
	if opts.User == "" {
		opts.User = "frr"
	}
	r := &Router{opts: opts}
	var specs []daemon.Spec
	for _, name := range daemonsFor(opts.BinDir) {
		argv := []string{filepath.Join(opts.BinDir, name),
			"-u", opts.User, "-g", opts.User,
			"-P", "0", // no vty TCP port: vtysh uses the unix sockets in Dir
			"-f", filepath.Join(opts.Dir, name+".conf"),
			"-i", filepath.Join(opts.Dir, name+".pid"),
			"--vty_socket", opts.Dir,
			"--log", "stdout",
		}
		if name == "zebra" || name == "bgpd" || name == "bfdd" {
			argv = append(argv, "-z", filepath.Join(opts.Dir, "zserv.api"))
		}
		if name == "bfdd" {
			argv = append(argv, "--bfdctl", r.bfdctlPath())
		}
		sock := filepath.Join(opts.Dir, name+".vty")
		d := name
		specs = append(specs, daemon.Spec{
			Name: name, Argv: argv, Netns: opts.Netns,
			LogPath: filepath.Join(opts.Dir, name+".log"),
			Ready: func(ctx context.Context) error {
				if _, err := os.Stat(sock); err != nil {
					return err
				}
				c, err := r.dialVty(ctx, d)
				if err == nil {
					c.Close()
				}
				return err
			},
		})
	}
	r.group = daemon.NewGroup(specs, r.reapply, opts.Log)
	return r, nil
}

// Start prepares the directory and starts the daemons with the current
// configuration.
func (r *Router) Start(ctx context.Context) error {
	acct, err := daemon.LookupAccount(r.opts.User)
	if err != nil {
		return fmt.Errorf("frr: user %q (install Debian's frr package): %w", r.opts.User, err)
	}
	uid, gid := acct.UID, acct.GIDs[0]
	// zebra and bgpd drop to the frr user and then make their pid files and
	// sockets in the directory: it is theirs, and every directory above it
	// must let them through (MakeDir says which one does not).
	if err := daemon.MakeDir(r.opts.Dir, 0o750, uid, gid, acct); err != nil {
		return fmt.Errorf("frr: %w", err)
	}
	for _, name := range daemonsFor(r.opts.BinDir) {
		path := filepath.Join(r.opts.Dir, name+".conf")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			// bgpd.conf is rewritten on every apply; the others stay empty.
			if err := atomicfile.Replace(path, nil, 0o640); err != nil {
				return fmt.Errorf("frr: %w", err)
			}
		}
		if err := os.Chown(path, uid, gid); err != nil {
			return fmt.Errorf("frr: %w", err)
		}
	}
	if err := r.stopStale(ctx); err != nil {
		return err
	}
	return r.group.Start(ctx)
}

// stopStale ends daemons of this directory that outlived the swmgr that
// started them (a kill -9 of swmgr leaves its children running, and a
// second bgpd would refuse to start over the first's pid file), and waits
// until they are gone.
func (r *Router) stopStale(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, name := range daemonsFor(r.opts.BinDir) {
		if _, err := daemon.KillStale(ctx, filepath.Join(r.opts.Dir, name+".pid"), filepath.Join(r.opts.Dir, name+".conf")); err != nil {
			return fmt.Errorf("frr: %s: %w", name, err)
		}
	}
	return nil
}

// Stop ends the daemons.
func (r *Router) Stop() { r.group.Stop() }

// Status reports the daemons for SystemStatus.FlexDaemons.
func (r *Router) Status() []daemon.Status { return r.group.Status() }

// Pid is a daemon's process id (tests kill it to check the restart).
func (r *Router) Pid(name string) int { return r.group.Pid(name) }

// RunningConfig is bgpd's running configuration, as FRR prints it.
func (r *Router) RunningConfig(ctx context.Context) (string, error) {
	out, err := r.show(ctx, "bgpd", "show running-config")
	if err != nil {
		return "", fmt.Errorf("frr: reading running configuration: %w", err)
	}
	return out, nil
}

// Plan returns the commands Apply would send (passwords included: not for
// display), for tests and diagnostics.
func (r *Router) Plan(ctx context.Context, cfg Config) ([]string, error) {
	want, err := cfg.renderAll()
	if err != nil {
		return nil, err
	}
	wantBFD, err := cfg.BFD.render()
	if err != nil {
		return nil, err
	}
	run, err := r.RunningConfig(ctx)
	if err != nil {
		return nil, err
	}
	var bfdCmds []string
	if len(wantBFD) > 0 || r.runsBFD() {
		runBFD, err := r.bfdRunning(ctx)
		if err != nil {
			return nil, err
		}
		bfdCmds = diffBFD(runBFD, wantBFD)
	}
	wantRA, err := renderRAIntervals(cfg.RAIntervals)
	if err != nil {
		return nil, err
	}
	r.applyMu.Lock()
	hadRA := len(r.current.RAIntervals) > 0
	r.applyMu.Unlock()
	var raCmds []string
	if len(wantRA) > 0 || hadRA {
		text, err := r.show(ctx, "zebra", "show running-config")
		if err != nil {
			return nil, fmt.Errorf("frr: reading zebra's running configuration: %w", err)
		}
		raCmds = diffRAIntervals(parseRAIntervals(text), wantRA)
	}
	return slices.Concat(bfdCmds, raCmds, diffAll(parseAll(run), want)), nil
}

// Apply makes FRR run cfg, sending only what differs from its running
// configuration. If FRR rejects any command, the running configuration is
// put back as it was and the error carries FRR's message.
func (r *Router) Apply(ctx context.Context, cfg Config) error {
	want, err := cfg.renderAll()
	if err != nil {
		return fmt.Errorf("frr: %w", err)
	}
	wantBFD, err := cfg.BFD.render()
	if err != nil {
		return fmt.Errorf("frr: %w", err)
	}
	wantRA, err := renderRAIntervals(cfg.RAIntervals)
	if err != nil {
		return fmt.Errorf("frr: %w", err)
	}
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	before, err := r.RunningConfig(ctx)
	if err != nil {
		return err
	}
	cmds := diffAll(parseAll(before), want)
	r.applies++
	// The VRFs' L3 VNIs are zebra's: mapped first, put back if bgpd
	// refuses what follows. Without any (now or before), zebra is not
	// asked.
	var vnisBefore map[string]uint32
	if len(cfg.EVPN.L3VNIs) > 0 || len(r.current.EVPN.L3VNIs) > 0 {
		vnisBefore, err = r.applyVRFVNIs(ctx, cfg.EVPN.l3VNIs())
	}
	// The router advertisement intervals are zebra's too (ndp.go); without
	// any (now or before), zebra is not asked.
	var raBefore map[string]string
	if err == nil && (len(wantRA) > 0 || len(r.current.RAIntervals) > 0) {
		raBefore, err = r.applyRAIntervals(ctx, wantRA)
	}
	// bfdd next: the profiles a neighbour's `bfd profile` names exist
	// before bgpd asks for its session (a refused BFD change is undone by
	// applyBFD itself).
	if err == nil {
		err = r.applyBFD(ctx, wantBFD)
	}
	if err != nil {
		if rbErr := r.restoreZebra(ctx, vnisBefore, raBefore); rbErr != nil {
			return fmt.Errorf("frr: %w; %v", err, rbErr)
		}
		return fmt.Errorf("frr: %w", err)
	}
	if len(cmds) > 0 {
		if applyErr := r.configure(ctx, cmds); applyErr != nil {
			// zebra was asked: its part goes back too.
			if rbErr := r.restoreZebra(ctx, vnisBefore, raBefore); rbErr != nil {
				return fmt.Errorf("frr: %w; %v", applyErr, rbErr)
			}
			if rbErr := errors.Join(r.restore(ctx, parseAll(before)), r.restoreBFD(ctx)); rbErr != nil {
				return fmt.Errorf("frr: %w; restoring the previous configuration also failed: %v", applyErr, rbErr)
			}
			return fmt.Errorf("frr: %w", applyErr)
		}
	}
	// No configuration file is written: it would hold the neighbors'
	// passwords in clear. A restarted bgpd starts empty and gets current
	// back from reapply.
	r.current = cfg
	return nil
}

// restoreZebra puts back what an apply changed in zebra before it failed:
// the VRFs' VNIs and the router advertisement intervals it found (nil:
// not asked).
func (r *Router) restoreZebra(ctx context.Context, vnis map[string]uint32, ra map[string]string) error {
	if vnis != nil {
		if _, err := r.applyVRFVNIs(ctx, vnis); err != nil {
			return fmt.Errorf("restoring the VRFs' VNIs also failed: %w", err)
		}
	}
	if ra != nil {
		if _, err := r.applyRAIntervals(ctx, ra); err != nil {
			return fmt.Errorf("restoring the router advertisement intervals also failed: %w", err)
		}
	}
	return nil
}

// runsBFD says bfdd is one of the instance's daemons.
func (r *Router) runsBFD() bool { return slices.Contains(daemonsFor(r.opts.BinDir), "bfdd") }

// bfdRunning is bfdd's running `bfd` node.
func (r *Router) bfdRunning(ctx context.Context) (bfdBlock, error) {
	out, err := r.show(ctx, "bfdd", "show running-config")
	if err != nil {
		return nil, fmt.Errorf("frr: reading bfdd's running configuration: %w", err)
	}
	return parseBFD(out), nil
}

// applyBFD makes bfdd run want, remembering what it ran before for
// restoreBFD (a later step of the apply failing).
func (r *Router) applyBFD(ctx context.Context, want bfdBlock) error {
	r.bfdBefore = nil
	if !r.runsBFD() {
		if len(want) > 0 {
			return errors.New("BFD needs FRR's bfdd, which is not installed")
		}
		return nil
	}
	running, err := r.bfdRunning(ctx)
	if err != nil {
		return err
	}
	r.bfdBefore = &running
	cmds := diffBFD(running, want)
	if len(cmds) == 0 {
		return nil
	}
	if err := r.configureOn(ctx, "bfdd", cmds); err != nil {
		return errors.Join(err, r.restoreBFD(ctx))
	}
	return nil
}

// restoreBFD puts back the `bfd` node bfdd ran before the apply.
func (r *Router) restoreBFD(ctx context.Context) error {
	if r.bfdBefore == nil {
		return nil
	}
	now, err := r.bfdRunning(ctx)
	if err != nil {
		return err
	}
	if cmds := diffBFD(now, *r.bfdBefore); len(cmds) > 0 {
		return r.configureOn(ctx, "bfdd", cmds)
	}
	return nil
}

// restore puts back the stanzas FRR printed before a failed apply.
func (r *Router) restore(ctx context.Context, before desired) error {
	now, err := r.RunningConfig(ctx)
	if err != nil {
		return err
	}
	cmds := diffAll(parseAll(now), before)
	if len(cmds) == 0 {
		return nil
	}
	return r.configure(ctx, cmds)
}

// Applies counts the apply rounds FRR was asked to do (each one reads the
// running configuration and sends one command batch).
func (r *Router) Applies() int {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	return r.applies
}

// reapply pushes the last good configuration after a daemon restart: a
// restarted bgpd starts with an empty configuration (no file holds the
// passwords), and a restarted zebra loses nothing of bgpd's, for which the
// diff sends nothing.
func (r *Router) reapply(ctx context.Context, name string) error {
	r.applyMu.Lock()
	cfg := r.current
	r.applyMu.Unlock()
	return r.Apply(ctx, cfg)
}
