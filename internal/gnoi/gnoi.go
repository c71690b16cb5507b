// Package gnoi is swmgr's gNOI front end: the System, File, Healthz and OS
// services of github.com/openconfig/gnoi, served on the gNMI server's gRPC
// server (internal/gnmi: the same port, TLS, metadata credentials, login
// throttle, access log and metrics).
//
// What each RPC needs of its user is declared once, in rpcs below, and
// checked in one place: the gNMI server's interceptors ask Need before
// any handler runs (gnmi.Service). The RPCs that change something
// (Reboot, CancelReboot, KillProcess, File.Put, File.Remove, OS.Install,
// OS.Activate, certz's Rotate, AddProfile, DeleteProfile) are recorded in
// the config log (API "gnoi"), refused ones too.
//
// System: Time; Ping and Traceroute run the switch's ping and traceroute
// (probe.go) in a network instance as the dataplane holds it (ExecIn),
// bounded per user; Reboot, RebootStatus, CancelReboot with
// the reboot action Options.Reboot; KillProcess signals one of the daemons
// swmgr supervises, which restarts it. File: Get, Put, Stat, Remove within
// declared areas (file.go). Healthz: Get, List and Artifact (a debug
// bundle) of swmgr's components (healthz.go). gNSI certz (certz.go):
// Rotate of the listeners' certificate and of the trust bundle and
// revocation lists their client certificates are checked against, rolled
// back unless finalized; other profiles, kept for staging
// (certzprofiles.go). OS: Install keeps swmgr's Debian packages, signed
// when a signing key is set (ospkg.go, package debsig); Activate installs
// one and restarts swmgr into it through a process apart from swmgr,
// which puts the previous version back unless the new one says it is
// ready in time, and is started again after a reboot that ended it;
// Verify reads how that went (activation.go).
// docs/gnoi.md lists each
// RPC, its role, its bounds and what does not apply.
package gnoi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	fpb "github.com/openconfig/gnoi/file"
	hpb "github.com/openconfig/gnoi/healthz"
	ospb "github.com/openconfig/gnoi/os"
	spb "github.com/openconfig/gnoi/system"
	cpb "github.com/openconfig/gnsi/certz"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/daemon"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/gnmi"
)

// RPC is one gNOI method as swmgr serves it: what it needs of its user
// and whether it changes the switch (then the config log records it).
type RPC struct {
	Service string // the gRPC service (gnoi.system.System)
	Method  string // Ping
	Need    auth.Need
	Changes bool
}

// FullMethod is the method's gRPC name, /gnoi.system.System/Ping.
func (r RPC) FullMethod() string { return "/" + r.Service + "/" + r.Method }

var (
	system  = spb.System_ServiceDesc.ServiceName
	file    = fpb.File_ServiceDesc.ServiceName
	healthz = hpb.Healthz_ServiceDesc.ServiceName
	certz   = cpb.Certz_ServiceDesc.ServiceName
	osSvc   = ospb.OS_ServiceDesc.ServiceName
)

// RPCs declares every gNOI (and gNSI certz) method swmgr registers: reads for any user,
// File.Get and Healthz.Artifact (files and logs) for operators, the rest
// (reboots, signals, writes, and the methods swmgr does not implement)
// for admins.
func RPCs() []RPC {
	return []RPC{
		{system, "Time", auth.NeedRead, false},
		{system, "Ping", auth.NeedRead, false},
		{system, "Traceroute", auth.NeedRead, false},
		{system, "Reboot", auth.NeedAdmin, true},
		{system, "RebootStatus", auth.NeedAdmin, false},
		{system, "CancelReboot", auth.NeedAdmin, true},
		{system, "KillProcess", auth.NeedAdmin, true},
		{system, "SetPackage", auth.NeedAdmin, true},
		{system, "SwitchControlProcessor", auth.NeedAdmin, true},
		{file, "Stat", auth.NeedRead, false},
		{file, "Get", auth.NeedOperator, false},
		{file, "Put", auth.NeedAdmin, true},
		{file, "Remove", auth.NeedAdmin, true},
		{file, "TransferToRemote", auth.NeedAdmin, false},
		{healthz, "Get", auth.NeedRead, false},
		{healthz, "List", auth.NeedRead, false},
		{healthz, "Artifact", auth.NeedOperator, false},
		{healthz, "Acknowledge", auth.NeedAdmin, true},
		{healthz, "Check", auth.NeedAdmin, false},
		{certz, "Rotate", auth.NeedAdmin, true},
		{certz, "AddProfile", auth.NeedAdmin, true},
		{certz, "DeleteProfile", auth.NeedAdmin, true},
		{certz, "GetProfileList", auth.NeedRead, false},
		{certz, "CanGenerateCSR", auth.NeedRead, false},
		{certz, "GetIntegrityManifest", auth.NeedAdmin, false},
		{osSvc, "Install", auth.NeedAdmin, true},
		{osSvc, "Activate", auth.NeedAdmin, true},
		{osSvc, "Verify", auth.NeedAdmin, false},
	}
}

// Rebooter carries out a reboot the delay of a Reboot later: method is
// gNOI's (COLD, POWERDOWN, HALT, WARM), message the request's.
type Rebooter func(ctx context.Context, method spb.RebootMethod, message string) error

// Options are what the gNOI services run on.
type Options struct {
	Engine  *engine.Engine // the config log, the running configuration
	Version string
	Backend string // the dataplane's name (Healthz)
	// Daemons reports the daemons swmgr supervises (FRR's, chronyd); nil:
	// none run.
	Daemons func() []daemon.Status
	// Reboot carries out a reboot; nil: Reboot is Unimplemented.
	Reboot Rebooter
	// LogDirs hold the daemons' logs (*.log), whose ends the debug bundle
	// holds.
	LogDirs []string
	// Areas are the directories File reaches (file.go).
	Areas []Area
	// MaxFile bounds a file Put writes; 0: DefaultMaxFile.
	MaxFile int64
	// Probes bound Ping and Traceroute (probe.go); zero fields: the
	// defaults.
	Probes ProbeLimits
	// Netns is the dataplane's network namespace, where probes run (a
	// request's network_instance is a VRF in it); "": this one. Used
	// when ExecIn is nil.
	Netns string
	// ExecIn, when set, is the command prefix that runs a probe in a
	// network instance ("default" or a VRF) as the dataplane holds it (a
	// VRF device, or a namespace per VRF); an error is a VRF the
	// dataplane does not have.
	ExecIn InstanceExec
	// Cert is where the listeners' certificate and key are, and the
	// trust bundle and revocation lists their client certificates are
	// checked against, which gNSI certz's Rotate replaces (certz.go);
	// nil: certz is not served.
	Cert *CertFiles
	// CertProfiles keeps certz's other profiles (certzprofiles.go); "":
	// there are none.
	CertProfiles string
	// OS is where OS.Install keeps packages and how Activate restarts
	// swmgr into one (ospkg.go, activation.go); a zero Dir: OS is
	// Unimplemented.
	OS  OSOptions
	Log *slog.Logger
}

// Server serves gNOI's System, File, Healthz and OS.
type Server struct {
	spb.UnimplementedSystemServer
	o     Options
	needs map[string]RPC
	probe probes
	files *files
	hz    *health
	certz *certzServer // nil: not served
	pkgs  *osPackages  // nil: OS is Unimplemented

	activateMu sync.Mutex // one Activate at a time

	rebootMu sync.Mutex
	reboot   *pendingReboot
	reboots  uint32
	last     *spb.RebootStatus
}

// New makes the gNOI services.
func New(o Options) (*Server, error) {
	if o.Engine == nil {
		return nil, errors.New("gnoi: Engine is required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxFile <= 0 {
		o.MaxFile = DefaultMaxFile
	}
	fs, err := newFiles(o.Areas, o.MaxFile)
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, needs: map[string]RPC{}, files: fs}
	s.probe.limits = o.Probes.withDefaults()
	s.hz = &health{s: s}
	for _, r := range RPCs() {
		s.needs[r.FullMethod()] = r
	}
	if o.Cert != nil {
		s.certz = newCertz(s, *o.Cert, o.CertProfiles)
	}
	if o.OS.Dir != "" {
		if o.OS.MaxPackage <= 0 {
			o.OS.MaxPackage = DefaultMaxPackage
		}
		if o.OS.Keep <= 0 {
			o.OS.Keep = DefaultKeepPackages
		}
		if o.OS.Deadline <= 0 {
			o.OS.Deadline = DefaultActivateDeadline
		}
		s.pkgs = &osPackages{o: o.OS}
	}
	return s, nil
}

// Register registers System, File, Healthz, OS (and gNSI certz) on the gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	spb.RegisterSystemServer(r, s)
	fpb.RegisterFileServer(r, fileServer{s: s})
	hpb.RegisterHealthzServer(r, healthzServer{s: s})
	ospb.RegisterOSServer(r, osServer{s: s})
	if s.certz != nil {
		cpb.RegisterCertzServer(r, s.certz)
	}
}

// Need is what fullMethod needs of its user, as RPCs declares it.
func (s *Server) Need(fullMethod string) (auth.Need, bool) {
	r, ok := s.needs[fullMethod]
	return r.Need, ok
}

// Refused records in the config log an RPC that changes something,
// refused for its user's role before it ran.
func (s *Server) Refused(ctx context.Context, fullMethod string, err error) {
	if r, ok := s.needs[fullMethod]; ok && r.Changes {
		s.o.Engine.Log(ctx, meta(ctx), logInfo(r.Method, nil), err)
	}
}

var _ gnmi.Service = (*Server)(nil)

// meta is the engine's record of who made a change over gNOI.
func meta(ctx context.Context) engine.Meta {
	return engine.Meta{User: gnmi.Identity(ctx).Name, Addr: gnmi.PeerAddr(ctx), Source: "gnoi"}
}

// logInfo is the config log's entry of an RPC: its method and what it was
// asked (never a file's contents).
func logInfo(method string, data any) *engine.LogInfo {
	b, _ := json.Marshal(data)
	if data == nil {
		b = nil
	}
	return &engine.LogInfo{API: "gnoi", Operation: method, Data: string(b)}
}

// record writes a change's config log entry: its success or its failure.
func (s *Server) record(ctx context.Context, method string, data any, err error) {
	info := logInfo(method, data)
	if err != nil {
		s.o.Engine.Log(ctx, meta(ctx), info, err)
		return
	}
	if lerr := s.o.Engine.LogSuccess(ctx, meta(ctx), info); lerr != nil {
		s.o.Log.Error("config log write failed", "method", method, "err", lerr)
	}
}

// Time answers the switch's time.
func (s *Server) Time(context.Context, *spb.TimeRequest) (*spb.TimeResponse, error) {
	return &spb.TimeResponse{Time: uint64(time.Now().UnixNano())}, nil
}

// invalid is an InvalidArgument status.
func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}
