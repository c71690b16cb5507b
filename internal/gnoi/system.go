package gnoi

import (
	"context"
	"fmt"
	"syscall"
	"time"

	spb "github.com/openconfig/gnoi/system"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxRebootDelay bounds a Reboot's delay.
const MaxRebootDelay = 24 * time.Hour

// pendingReboot is a reboot waiting for its delay.
type pendingReboot struct {
	when    time.Time
	method  spb.RebootMethod
	message string
	timer   *time.Timer
}

// rebootMethod says whether m is a method a Linux switch can carry out.
func rebootMethod(m spb.RebootMethod) bool {
	switch m {
	case spb.RebootMethod_COLD, spb.RebootMethod_POWERDOWN, spb.RebootMethod_HALT, spb.RebootMethod_WARM:
		return true
	}
	return false
}

// Reboot schedules the reboot action after the request's delay (at once
// when none); one reboot may be pending.
func (s *Server) Reboot(ctx context.Context, r *spb.RebootRequest) (*spb.RebootResponse, error) {
	data := map[string]any{"method": r.GetMethod().String(), "delay": r.GetDelay(), "message": r.GetMessage()}
	err := s.reboot1(ctx, r)
	s.record(ctx, "Reboot", data, err)
	if err != nil {
		return nil, err
	}
	return &spb.RebootResponse{}, nil
}

func (s *Server) reboot1(ctx context.Context, r *spb.RebootRequest) error {
	if s.o.Reboot == nil {
		return status.Error(codes.Unimplemented, "this swmgr does not reboot the switch")
	}
	if len(r.GetSubcomponents()) > 0 {
		return status.Error(codes.Unimplemented, "rebooting a subcomponent: the switch is one component")
	}
	if !rebootMethod(r.GetMethod()) {
		return invalid("reboot method %s: use COLD, POWERDOWN, HALT or WARM", r.GetMethod())
	}
	delay := time.Duration(r.GetDelay())
	if r.GetDelay() > uint64(MaxRebootDelay) {
		return invalid("reboot delay %v is more than %v", time.Duration(r.GetDelay()), MaxRebootDelay)
	}
	s.rebootMu.Lock()
	defer s.rebootMu.Unlock()
	if s.reboot != nil {
		return status.Errorf(codes.FailedPrecondition, "a reboot is pending at %s: cancel it first (CancelReboot)", s.reboot.when.UTC().Format(time.RFC3339))
	}
	p := &pendingReboot{when: time.Now().Add(delay), method: r.GetMethod(), message: r.GetMessage()}
	s.reboot = p
	p.timer = time.AfterFunc(delay, func() { s.rebootNow(p) })
	s.o.Log.Warn("reboot scheduled", "method", p.method.String(), "when", p.when.UTC().Format(time.RFC3339), "message", p.message)
	return nil
}

// rebootNow carries out the pending reboot p, unless it was cancelled.
func (s *Server) rebootNow(p *pendingReboot) {
	s.rebootMu.Lock()
	if s.reboot != p {
		s.rebootMu.Unlock()
		return
	}
	s.rebootMu.Unlock()
	err := s.o.Reboot(context.Background(), p.method, p.message)
	s.rebootMu.Lock()
	defer s.rebootMu.Unlock()
	s.reboot = nil
	s.reboots++
	if err != nil {
		s.o.Log.Error("reboot failed", "err", err)
		s.last = &spb.RebootStatus{Status: spb.RebootStatus_STATUS_FAILURE, Message: err.Error()}
		return
	}
	s.last = &spb.RebootStatus{Status: spb.RebootStatus_STATUS_SUCCESS, Message: p.message}
}

// RebootStatus says whether a reboot is pending, when, and how the last
// one went.
func (s *Server) RebootStatus(ctx context.Context, r *spb.RebootStatusRequest) (*spb.RebootStatusResponse, error) {
	if len(r.GetSubcomponents()) > 0 {
		return nil, status.Error(codes.Unimplemented, "a subcomponent's reboot status: the switch is one component")
	}
	s.rebootMu.Lock()
	defer s.rebootMu.Unlock()
	out := &spb.RebootStatusResponse{Count: s.reboots, Status: s.last}
	if p := s.reboot; p != nil {
		out.Active, out.When, out.Reason, out.Method = true, uint64(p.when.UnixNano()), p.message, p.method
		out.Wait = uint64(max(time.Until(p.when), 0))
	}
	return out, nil
}

// CancelReboot cancels the pending reboot; none pending is no error.
func (s *Server) CancelReboot(ctx context.Context, r *spb.CancelRebootRequest) (*spb.CancelRebootResponse, error) {
	s.rebootMu.Lock()
	p := s.reboot
	if p != nil {
		p.timer.Stop()
		s.reboot = nil
	}
	s.rebootMu.Unlock()
	s.record(ctx, "CancelReboot", map[string]any{"message": r.GetMessage(), "pending": p != nil}, nil)
	if p != nil {
		s.o.Log.Warn("reboot cancelled", "message", r.GetMessage())
	}
	return &spb.CancelRebootResponse{}, nil
}

// signalOf is the process signal gNOI's signal sends.
func signalOf(s spb.KillProcessRequest_Signal) (syscall.Signal, bool) {
	switch s {
	case spb.KillProcessRequest_SIGNAL_TERM:
		return syscall.SIGTERM, true
	case spb.KillProcessRequest_SIGNAL_KILL:
		return syscall.SIGKILL, true
	case spb.KillProcessRequest_SIGNAL_HUP:
		return syscall.SIGHUP, true
	case spb.KillProcessRequest_SIGNAL_ABRT:
		return syscall.SIGABRT, true
	}
	return 0, false
}

// KillProcess signals one of the daemons swmgr supervises, named by name
// (bgpd, zebra, chronyd) or pid; the supervisor (internal/daemon) starts
// one that ends again and re-applies its configuration, so restart=false
// is refused: no daemon of swmgr's stays down.
func (s *Server) KillProcess(ctx context.Context, r *spb.KillProcessRequest) (*spb.KillProcessResponse, error) {
	data := map[string]any{"name": r.GetName(), "pid": r.GetPid(), "signal": r.GetSignal().String(), "restart": r.GetRestart()}
	err := s.kill(r)
	s.record(ctx, "KillProcess", data, err)
	if err != nil {
		return nil, err
	}
	return &spb.KillProcessResponse{}, nil
}

func (s *Server) kill(r *spb.KillProcessRequest) error {
	sig, ok := signalOf(r.GetSignal())
	if !ok {
		return invalid("signal %s: use SIGNAL_TERM, SIGNAL_KILL, SIGNAL_HUP or SIGNAL_ABRT", r.GetSignal())
	}
	if !r.GetRestart() && sig != syscall.SIGHUP {
		return invalid("restart false: swmgr's daemons are supervised and always restarted; send restart true")
	}
	if r.GetName() == "" && r.GetPid() == 0 {
		return invalid("name or pid is required: a daemon swmgr runs (%s)", s.daemonNames())
	}
	if s.o.Daemons != nil {
		for _, d := range s.o.Daemons() {
			if (r.GetName() == "" || r.GetName() == d.Name) && (r.GetPid() == 0 || int(r.GetPid()) == d.Pid) {
				if d.Pid <= 0 {
					return status.Errorf(codes.FailedPrecondition, "daemon %s is %s: no process to signal", d.Name, d.State)
				}
				s.o.Log.Warn("signalling daemon", "daemon", d.Name, "pid", d.Pid, "signal", sig.String())
				if err := syscall.Kill(d.Pid, sig); err != nil {
					return status.Errorf(codes.Internal, "signal %s to %s (pid %d): %v", sig, d.Name, d.Pid, err)
				}
				return nil
			}
		}
	}
	return status.Errorf(codes.NotFound, "no daemon of swmgr's is %s (those running: %s)", describeProcess(r), s.daemonNames())
}

func describeProcess(r *spb.KillProcessRequest) string {
	switch {
	case r.GetName() != "" && r.GetPid() != 0:
		return fmt.Sprintf("%s with pid %d", r.GetName(), r.GetPid())
	case r.GetName() != "":
		return r.GetName()
	}
	return fmt.Sprintf("pid %d", r.GetPid())
}

func (s *Server) daemonNames() string {
	var names []string
	if s.o.Daemons != nil {
		for _, d := range s.o.Daemons() {
			names = append(names, d.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return fmt.Sprint(names)
}
