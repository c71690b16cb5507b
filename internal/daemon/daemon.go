// Package daemon starts and watches the external daemons swmgr drives (FRR's
// zebra and bgpd, chronyd): each runs in the foreground as a child, optionally
// inside a named network namespace, and a daemon that exits on its own is
// restarted after a short backoff, after which its owner re-applies its
// configuration. The status it reports is what SystemStatus.FlexDaemons shows.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Spec describes one daemon.
type Spec struct {
	Name string   // as reported, e.g. "bgpd"
	Argv []string // the daemon's command line, without the namespace wrapper
	// Netns, when set, runs the daemon inside that named namespace
	// (ip netns exec replaces itself with the daemon, so the child's pid is
	// the daemon's).
	Netns   string
	LogPath string // stdout and stderr are appended here
	// Ready waits until the daemon serves requests (its control socket
	// answers); nil means started is ready.
	Ready func(ctx context.Context) error
}

// Status is one daemon's health, shaped after FlexSwitch's DaemonState.
type Status struct {
	Name          string
	State         string // "up", "starting", "restarting", "stopped"
	Pid           int
	StartTime     time.Time
	RestartCount  int
	RestartTime   time.Time
	RestartReason string
}

// Group runs daemons in order and restarts any that die. A restarted daemon
// is made ready, then OnRestart is called so its owner can push the
// configuration back.
type Group struct {
	specs     []Spec
	onRestart func(ctx context.Context, name string) error
	backoff   time.Duration
	log       *slog.Logger

	mu      sync.Mutex
	procs   map[string]*proc
	cancel  context.CancelFunc
	done    sync.WaitGroup
	stopped bool
}

type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	status Status
}

// NewGroup prepares daemons started in the given order. onRestart may be
// nil. log receives each start, exit and restart (nil: discarded), so an
// operator sees a daemon that flaps without polling SystemStatus.
func NewGroup(specs []Spec, onRestart func(ctx context.Context, name string) error, log *slog.Logger) *Group {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Group{specs: specs, onRestart: onRestart, backoff: 300 * time.Millisecond, procs: map[string]*proc{}, log: log}
}

// Start launches every daemon in order, each ready before the next starts,
// and begins watching them. On failure the ones already started are stopped.
func (g *Group) Start(ctx context.Context) error {
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g.mu.Lock()
	g.cancel = cancel
	g.mu.Unlock()
	for _, s := range g.specs {
		p, err := g.launch(ctx, s)
		if err != nil {
			g.Stop()
			return err
		}
		g.done.Add(1)
		go g.watch(watchCtx, s, p)
	}
	return nil
}

func (g *Group) launch(ctx context.Context, s Spec) (*proc, error) {
	argv := s.Argv
	if s.Netns != "" {
		argv = append([]string{"ip", "netns", "exec", s.Netns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if s.LogPath != "" {
		f, err := os.OpenFile(s.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
		if err != nil {
			return nil, fmt.Errorf("start %s: log: %w", s.Name, err)
		}
		defer f.Close() // the child keeps its own descriptor
		cmd.Stdout, cmd.Stderr = f, f
	}
	// Its own process group, so a terminal's signals do not reach it and a
	// stop reaches any helper it forked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	g.mu.Lock()
	old := g.procs[s.Name]
	p.status = Status{Name: s.Name, State: "starting", Pid: cmd.Process.Pid, StartTime: time.Now()}
	if old != nil {
		p.status.RestartCount = old.status.RestartCount
		p.status.RestartTime = old.status.RestartTime
		p.status.RestartReason = old.status.RestartReason
	}
	g.procs[s.Name] = p
	g.mu.Unlock()
	if s.Ready != nil {
		// Generous: FRR's daemons take many seconds to come up on a loaded
		// machine or under software emulation (the VM tests).
		readyCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := waitReady(readyCtx, s, p); err != nil {
			stopProc(p)
			return nil, err
		}
	}
	g.mu.Lock()
	p.status.State = "up"
	restarts, pid := p.status.RestartCount, p.status.Pid
	g.mu.Unlock()
	g.log.Info("daemon up", "daemon", s.Name, "pid", pid, "restarts", restarts)
	return p, nil
}

func waitReady(ctx context.Context, s Spec, p *proc) error {
	var last error
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("start %s: exited during start-up (%v); see %s", s.Name, p.cmd.ProcessState, s.LogPath)
		default:
		}
		if last = s.Ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start %s: not ready: %w", s.Name, errors.Join(last, ctx.Err()))
		case <-p.exited:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (g *Group) watch(ctx context.Context, s Spec, p *proc) {
	defer g.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.exited:
		}
		g.mu.Lock()
		if g.stopped {
			g.mu.Unlock()
			return
		}
		p.status.State = "restarting"
		p.status.RestartCount++
		p.status.RestartTime = time.Now()
		p.status.RestartReason = fmt.Sprintf("exited: %v", p.cmd.ProcessState)
		count, pid := p.status.RestartCount, p.status.Pid
		g.mu.Unlock()
		g.log.Warn("daemon exited; restarting it", "daemon", s.Name, "pid", pid, "status", p.cmd.ProcessState.String(),
			"restart", count, "log", s.LogPath)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(g.backoff):
			}
			np, err := g.launch(ctx, s)
			if err == nil {
				p = np
				break
			}
			g.mu.Lock()
			if cur := g.procs[s.Name]; cur != nil {
				cur.status.State = "restarting"
				cur.status.RestartReason = err.Error()
			}
			g.mu.Unlock()
			g.log.Error("daemon restart failed; retrying", "daemon", s.Name, "err", err)
		}
		if g.onRestart != nil {
			if err := g.onRestart(ctx, s.Name); err != nil {
				g.log.Error("daemon restarted, but its configuration could not be re-applied", "daemon", s.Name, "err", err)
				g.mu.Lock()
				p.status.RestartReason += "; re-applying configuration: " + err.Error()
				g.mu.Unlock()
			} else {
				g.log.Info("daemon configuration re-applied", "daemon", s.Name)
			}
		}
	}
}

// Restart stops every daemon and starts them again, in order, each ready
// before the next: for a configuration a daemon reads only at start. It is
// not counted as a restart in Status (nothing failed).
func (g *Group) Restart(ctx context.Context) error {
	g.Stop()
	g.mu.Lock()
	g.stopped = false
	g.mu.Unlock()
	g.log.Info("restarting daemons for a new configuration", "daemons", len(g.specs))
	return g.Start(ctx)
}

// Status reports every daemon, in start order.
func (g *Group) Status() []Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Status, 0, len(g.specs))
	for _, s := range g.specs {
		if p := g.procs[s.Name]; p != nil {
			out = append(out, p.status)
		} else {
			out = append(out, Status{Name: s.Name, State: "stopped"})
		}
	}
	return out
}

// Pid returns the daemon's current process id (0 if not running).
func (g *Group) Pid(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.procs[name]; p != nil {
		return p.status.Pid
	}
	return 0
}

// Stop ends every daemon, in reverse start order, and stops watching.
func (g *Group) Stop() {
	g.mu.Lock()
	g.stopped = true
	if g.cancel != nil {
		g.cancel()
	}
	g.mu.Unlock()
	g.done.Wait()
	for i := len(g.specs) - 1; i >= 0; i-- {
		g.mu.Lock()
		p := g.procs[g.specs[i].Name]
		if p != nil {
			p.status.State = "stopped"
		}
		g.mu.Unlock()
		if p != nil {
			stopProc(p)
			g.log.Info("daemon stopped", "daemon", g.specs[i].Name)
		}
	}
}

// stopProc asks politely, then insists.
func stopProc(p *proc) {
	pgid := -p.cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-p.exited
	}
}
