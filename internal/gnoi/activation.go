package gnoi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	ospb "github.com/openconfig/gnoi/os"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/atomicfile"
)

// DefaultActivateDeadline is how long a newly installed swmgr has to be
// ready before the previous version is put back.
const DefaultActivateDeadline = 2 * time.Minute

// installBudget is how long installing a package (dpkg -i, the service's
// restart) may take before an activation still recorded as under way is
// taken for one whose carrier died.
const installBudget = 5 * time.Minute

// Names in the package directory.
const (
	activationFile = "activation.json"  // the last activation (Activation)
	readyFile      = "activation-ready" // the new swmgr's word that it is ready: the activation's ID
)

// An activation's states.
const (
	statePending    = "pending"     // installing the new version, or waiting for it to be ready
	stateActivated  = "activated"   // the new version was ready in time
	stateRolledBack = "rolled-back" // it was not (or did not install): the previous one is back
	stateFailed     = "failed"      // the previous one could not be put back either, or nothing started
)

// Activation is the record of one OS.Activate, kept in the package
// directory: written by Activate, carried out (CarryOutActivation) by a
// process apart from swmgr, which the new swmgr tells it is ready
// (ConfirmActivation), read by Verify.
type Activation struct {
	ID       string        `json:"id"`
	From     string        `json:"from"` // the version running when it was asked for: put back if To fails
	To       string        `json:"to"`
	Deadline time.Duration `json:"deadline"` // To's time to be ready once installed
	Started  time.Time     `json:"started"`
	State    string        `json:"state"`
	Message  string        `json:"message,omitempty"` // why it failed
	// Boot is the kernel's boot ID when the activation was asked for
	// (or resumed): a pending activation of another boot lost its
	// carrier to a reboot (ResumeInterrupted).
	Boot string `json:"boot,omitempty"`
	// Resume says how the carrier of an activation a reboot interrupted
	// goes on: resumeWait or resumeRollBack; "": from the start.
	Resume string `json:"resume,omitempty"`
}

// How a resumed activation goes on (Activation.Resume).
const (
	// resumeWait: To runs after the reboot; wait for its word, for the
	// deadline, as after an installation.
	resumeWait = "wait"
	// resumeRollBack: To does not run (the reboot came before it was
	// installed): put From back at once.
	resumeRollBack = "roll-back"
)

// bootIDFile holds the kernel's ID of the running boot.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// BootID is the kernel's ID of the running boot ("" if unknown).
func BootID() string {
	b, err := os.ReadFile(bootIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ResumeInterrupted finds a pending activation whose carrier a reboot
// ended (the record is of another boot than boot) and sets how it goes
// on, for the carrier started again (the Activator): when version, the
// swmgr starting, is the activation's To, its carrier waits for its word
// for the deadline from now; otherwise To never ran, and the carrier puts
// From back at once. It says whether a carrier is to be started. A
// pending activation of this boot still has its carrier: untouched.
func ResumeInterrupted(dir, version, boot string, now time.Time) (Activation, bool, error) {
	a, err := readActivation(dir)
	if os.IsNotExist(err) {
		return a, false, nil
	}
	if err != nil || a.State != statePending || boot == "" || a.Boot == "" || a.Boot == boot {
		return a, false, err
	}
	a.Boot, a.Started, a.Resume = boot, now, resumeRollBack
	if version == a.To {
		a.Resume = resumeWait
	}
	if err := writeActivation(dir, a); err != nil {
		return a, false, fmt.Errorf("resume the activation of swmgr %s: %w", a.To, err)
	}
	return a, true, nil
}

// Activator starts carrying out the activation recorded in dir (a
// process that survives swmgr's restart) and returns.
type Activator func(ctx context.Context, dir string, a Activation) error

// Installer installs a package and leaves the service running it (dpkg
// -i, then swmgr.service started if it is not running).
type Installer func(ctx context.Context, deb string) error

func readActivation(dir string) (Activation, error) {
	var a Activation
	b, err := os.ReadFile(filepath.Join(dir, activationFile))
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("%s: %w", activationFile, err)
	}
	return a, nil
}

func writeActivation(dir string, a Activation) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Replace(filepath.Join(dir, activationFile), append(b, '\n'), 0o600)
}

// underWay says whether a is still being carried out: pending, and not
// older than its installation and deadline allow.
func (a Activation) underWay(now time.Time) bool {
	return a.State == statePending && now.Before(a.Started.Add(installBudget+a.Deadline))
}

// Activate installs a kept version and restarts swmgr into it, through
// the Activator: answered once the activation is under way (the restart
// ends this connection). A version not kept is NON_EXISTENT_VERSION; the
// version running is ActivateOK with nothing done; the running version's
// own package must be kept (Install it), so that it can be put back.
func (o osServer) Activate(ctx context.Context, r *ospb.ActivateRequest) (*ospb.ActivateResponse, error) {
	s := o.s
	resp, err := s.activate(ctx, r)
	logged := err
	if ae := resp.GetActivateError(); ae != nil {
		logged = fmt.Errorf("%s: %s", ae.GetType(), ae.GetDetail())
	}
	s.record(ctx, "Activate", map[string]any{"version": r.GetVersion(), "from": s.o.Version}, logged)
	return resp, err
}

func activateError(typ ospb.ActivateError_Type, format string, args ...any) *ospb.ActivateResponse {
	return &ospb.ActivateResponse{Response: &ospb.ActivateResponse_ActivateError{ActivateError: &ospb.ActivateError{Type: typ, Detail: fmt.Sprintf(format, args...)}}}
}

var activateOK = &ospb.ActivateResponse{Response: &ospb.ActivateResponse_ActivateOk{ActivateOk: &ospb.ActivateOK{}}}

func (s *Server) activate(ctx context.Context, r *ospb.ActivateRequest) (*ospb.ActivateResponse, error) {
	p := s.pkgs
	if p == nil || p.o.Activate == nil {
		return nil, status.Error(codes.Unimplemented, "this swmgr does not activate packages")
	}
	if r.GetStandbySupervisor() {
		return activateError(ospb.ActivateError_NOT_SUPPORTED_ON_BACKUP, "the switch has one supervisor"), nil
	}
	if r.GetNoReboot() || r.GetBootConfig() != nil {
		return nil, status.Error(codes.Unimplemented, "no_reboot and boot_config: swmgr activates a version by installing it and restarting into it; there is no next boot to set")
	}
	v := r.GetVersion()
	if v == s.o.Version {
		return activateOK, nil
	}
	path, ok := p.path(v)
	if !ok {
		return activateError(ospb.ActivateError_NON_EXISTENT_VERSION, "swmgr %q is not kept: Install it first", v), nil
	}
	if err := p.signed(path); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "the kept package of swmgr %s: %v: Install it again, signed", v, err)
	}
	if _, ok := p.path(s.o.Version); !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "the running version's package (swmgr %s) is not kept: Install it first, so that a failed activation can put it back", s.o.Version)
	}
	s.activateMu.Lock()
	defer s.activateMu.Unlock()
	now := time.Now()
	if a, err := readActivation(p.o.Dir); err == nil && a.underWay(now) {
		return nil, status.Errorf(codes.FailedPrecondition, "the activation of swmgr %s, asked for at %s, is under way", a.To, a.Started.UTC().Format(time.RFC3339))
	}
	id := make([]byte, 8)
	rand.Read(id)
	a := Activation{ID: hex.EncodeToString(id), From: s.o.Version, To: v, Deadline: p.o.Deadline, Started: now, State: statePending, Boot: BootID()}
	if err := os.Remove(filepath.Join(p.o.Dir, readyFile)); err != nil && !os.IsNotExist(err) {
		return nil, status.Errorf(codes.Internal, "activation: %v", err)
	}
	if err := writeActivation(p.o.Dir, a); err != nil {
		return nil, status.Errorf(codes.Internal, "activation: %v", err)
	}
	if err := p.o.Activate(ctx, p.o.Dir, a); err != nil {
		a.State, a.Message = stateFailed, fmt.Sprintf("starting the activation of swmgr %s failed: %v", v, err)
		writeActivation(p.o.Dir, a)
		return nil, status.Errorf(codes.Internal, "%s", a.Message)
	}
	s.o.Log.Warn("os: activation started: swmgr restarts into the new version", "from", a.From, "to", a.To, "deadline", a.Deadline)
	return activateOK, nil
}

// Verify answers the version running and, when the last activation
// failed (the previous version was put back), why.
func (o osServer) Verify(ctx context.Context, r *ospb.VerifyRequest) (*ospb.VerifyResponse, error) {
	s := o.s
	out := &ospb.VerifyResponse{Version: s.o.Version}
	if s.pkgs == nil {
		return out, nil
	}
	a, err := readActivation(s.pkgs.o.Dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, status.Errorf(codes.Internal, "activation record: %v", err)
	}
	if a.State == stateRolledBack || a.State == stateFailed {
		out.ActivationFailMessage = a.Message
	}
	return out, nil
}

// ConfirmActivation is the ready swmgr's word to the activation that
// installed it: when the activation recorded in dir is pending and is to
// version, its ID is written where CarryOutActivation looks. It says
// whether it confirmed one.
func ConfirmActivation(dir, version string) (bool, error) {
	a, err := readActivation(dir)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil || a.State != statePending || a.To != version {
		return false, err
	}
	if err := atomicfile.Replace(filepath.Join(dir, readyFile), []byte(a.ID+"\n"), 0o600); err != nil {
		return false, fmt.Errorf("confirm activation: %w", err)
	}
	return true, nil
}

// confirmed says whether the activation id's new swmgr said it is ready.
func confirmed(dir, id string) bool {
	b, err := os.ReadFile(filepath.Join(dir, readyFile))
	return err == nil && strings.TrimSpace(string(b)) == id
}

// Carrier is what carries out an activation (CarryOutActivation) works
// with.
type Carrier struct {
	// Install installs a package and leaves the service running it.
	Install Installer
	// Stop stops the service, so that its store is closed; nil: the
	// store is not kept.
	Stop func(ctx context.Context) error
	// Store is the service's store, copied (the service stopped) before
	// the new version runs and put back if the previous version is:
	// whatever the new one did to it (a migration to a format the
	// previous one cannot read) is undone. "": not kept.
	Store string
	Poll  time.Duration // how often to look for the new swmgr's word
	Log   *slog.Logger
}

// storeCopy is where the store is kept during activation id.
func storeCopy(dir, id string) string { return filepath.Join(dir, ".store-before-"+id) }

// CarryOutActivation carries out the pending activation recorded in dir:
// it stops the service and copies its store, installs the new version's
// package, then waits for the new swmgr's ConfirmActivation, checking
// every Poll, for the activation's deadline. If the installation fails or
// the deadline passes first, it stops the service, puts the store back
// and installs the previous version's package again. The record says how
// it ended (Verify reads it); so does the returned Activation. An
// activation resumed after a reboot (ResumeInterrupted) skips what was
// done before it: it waits for To's word, or puts From back at once.
func CarryOutActivation(ctx context.Context, dir string, c Carrier) (Activation, error) {
	log := c.Log
	a, err := readActivation(dir)
	if err != nil {
		return a, fmt.Errorf("activation: %w", err)
	}
	if a.State != statePending {
		return a, fmt.Errorf("activation %s (swmgr %s): %s, not pending", a.ID, a.To, a.State)
	}
	kept := storeCopy(dir, a.ID)
	// A carrier stopped before the activation ended (ctx cancelled: the
	// SIGTERM of a reboot's shutdown) leaves it pending, whatever step
	// failed for it: the failure says nothing of the new version, and the
	// next start of swmgr resumes the activation (ResumeInterrupted).
	interrupted := func(err error) (Activation, error) {
		return a, fmt.Errorf("activation of swmgr %s: stopped before it ended, left pending for the next start of swmgr: %w", a.To, err)
	}
	end := func(state, message string) (Activation, error) {
		if state != stateActivated && ctx.Err() != nil {
			return interrupted(fmt.Errorf("%s", message))
		}
		a.State, a.Message = state, message
		if state != stateFailed {
			os.Remove(kept) // put back, or no longer needed
		}
		if err := writeActivation(dir, a); err != nil {
			return a, fmt.Errorf("activation: %w", err)
		}
		os.Remove(filepath.Join(dir, readyFile))
		return a, nil
	}
	keeping := c.Store != "" && c.Stop != nil
	rollBack := func(why string) (Activation, error) {
		log.Error("activation failed: putting the previous version back", "to", a.To, "from", a.From, "why", why)
		a.Message = why
		if keeping {
			if err := c.Stop(ctx); err != nil {
				return end(stateFailed, fmt.Sprintf("%s; stopping swmgr %s to put its store back failed: %v", why, a.To, err))
			}
			// No copy: a reboot came before it was made, so To never
			// ran on the store.
			if _, err := os.Stat(kept); err == nil {
				if err := os.Rename(kept, c.Store); err != nil {
					return end(stateFailed, fmt.Sprintf("%s; putting the store back failed: %v", why, err))
				}
				atomicfile.SyncDir(filepath.Dir(c.Store))
			}
		}
		if err := c.Install(ctx, filepath.Join(dir, packageFile(a.From))); err != nil {
			return end(stateFailed, fmt.Sprintf("%s; putting swmgr %s back failed too: %v", why, a.From, err))
		}
		log.Warn("activation rolled back", "running", a.From)
		return end(stateRolledBack, fmt.Sprintf("%s; swmgr %s was put back", why, a.From))
	}
	switch a.Resume {
	case resumeRollBack:
		return rollBack(fmt.Sprintf("a reboot interrupted the activation before swmgr %s ran", a.To))
	case resumeWait:
		log.Info("activation resumed after a reboot: waiting for the new version", "to", a.To, "deadline", a.Deadline)
	default:
		if keeping {
			if err := c.Stop(ctx); err != nil {
				return end(stateFailed, fmt.Sprintf("stopping swmgr %s to keep its store failed: %v", a.From, err))
			}
			if err := copyFile(c.Store, kept); err != nil {
				return end(stateFailed, fmt.Sprintf("keeping the store failed: %v", err))
			}
		}
		log.Info("activation: installing", "to", a.To, "from", a.From, "deadline", a.Deadline)
		if err := c.Install(ctx, filepath.Join(dir, packageFile(a.To))); err != nil {
			if ctx.Err() != nil {
				return interrupted(err)
			}
			return rollBack(fmt.Sprintf("installing swmgr %s failed: %v", a.To, err))
		}
	}
	deadline := time.NewTimer(a.Deadline)
	defer deadline.Stop()
	tick := time.NewTicker(c.Poll)
	defer tick.Stop()
	for !confirmed(dir, a.ID) {
		select {
		case <-ctx.Done():
			return interrupted(fmt.Errorf("waiting for it to be ready: %w", ctx.Err()))
		case <-deadline.C:
			if confirmed(dir, a.ID) {
				break
			}
			return rollBack(fmt.Sprintf("swmgr %s was not ready within %s of its installation", a.To, a.Deadline))
		case <-tick.C:
		}
	}
	log.Info("activation: the new version is ready", "version", a.To)
	return end(stateActivated, "")
}

// copyFile copies src to a new, synced dst (mode 0600).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
