// Package lifecycle runs the configuration lifecycle actions over the
// engine: SaveConfig, ResetConfig and ResetConfigToFile, FlexSwitch 1.x's
// ApplyConfig and ForceApplyConfig (and their ByFile forms), the startup
// configuration, the ConfigArchiveServer scheduler and the state they show.
//
// It is a provider of the binding table (Bindings: its actions, and its
// shares of SystemParam's and ConfigArchiveServer's state), so every front
// door runs its actions through bind.Table; it imports no front door. It
// reaches the engine through its public API only: Snapshot and Replace
// (save, reset, restore), Revision, PendingConfirm (no save while a commit
// awaits confirmation), Feed (the scheduler follows commits), Log and
// LogSuccess (the config log of its actions) and Registry.
package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/archive"
	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/configfile"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

// StartupConfig is the default saved configuration's name in the data
// directory.
const StartupConfig = datadir.StartupConfig

// Options wire a Lifecycle.
type Options struct {
	Engine  *engine.Engine
	Sealer  configfile.Sealer // the switch's key (secrets.Box)
	DataDir string
	Version string // swmgr's version, written in saved files
	Log     *slog.Logger
	// Set by tests and benchmarks.
	KDF          *configfile.KDFParams // nil: configfile.DefaultKDF
	Clock        archive.Clock         // the scheduler's clock
	Backoff      time.Duration         // between SFTP attempts; 0: 1 s
	Settle       time.Duration         // OnChange quiet period; 0: 500 ms
	NoScheduler  bool                  // do not start ConfigArchiveServer uploads
	AdminGroup   string                // users a reset keeps; "" = model.AdminGroup
	NowForStamps func() time.Time      // Timestamp names; nil: time.Now
}

// Lifecycle is the configuration lifecycle of one switch.
type Lifecycle struct {
	o     Options
	eng   *engine.Engine
	reg   *model.Registry
	sftp  *archive.SFTP
	sched *archive.Scheduler
	log   *slog.Logger

	saveMu sync.Mutex // one save at a time (the temporary file is per path)
	mu     sync.Mutex
	saved  SavedState

	stopWatch context.CancelFunc
	watchDone chan struct{}
}

// SavedState is what the data directory remembers of the last save.
type SavedState struct {
	Revision uint64
	At       time.Time
	To       string
}

const (
	savedFile     = datadir.SavedState
	hostKeysFile  = datadir.ArchiveKnownHosts
	archiveState  = datadir.ArchiveState
	archiveKind   = "ConfigArchiveServer"
	maxDryRunDiff = 10000
)

// New makes a lifecycle; Start begins the archive scheduler.
func New(o Options) (*Lifecycle, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.AdminGroup == "" {
		o.AdminGroup = model.AdminGroup
	}
	if o.NowForStamps == nil {
		o.NowForStamps = time.Now
	}
	// A damaged state file is moved aside and swmgr starts without it
	// (docs/configfile.md, "Files of the data directory").
	pins, damaged, err := archive.OpenHostKeys(filepath.Join(o.DataDir, hostKeysFile))
	if err != nil {
		return nil, err
	}
	if damaged != nil {
		o.Log.Warn("the pinned host keys of the archive servers were damaged: each server's key is pinned again on its next connection; compare the HostKey of state/ConfigArchiveServer with the server's", "err", damaged)
	}
	l := &Lifecycle{o: o, eng: o.Engine, reg: o.Engine.Registry(), sftp: &archive.SFTP{Pins: pins}, log: o.Log}
	if damaged, err := datadir.LoadState(filepath.Join(o.DataDir, savedFile), &l.saved); err != nil {
		return nil, err
	} else if damaged != nil {
		o.Log.Warn("the record of the last save was damaged: SavedRevision is 0 until the next SaveConfig", "err", damaged)
	}
	l.sched, err = archive.NewScheduler(archive.SchedulerOptions{
		Render:    l.render,
		SFTP:      l.sftp,
		StatePath: filepath.Join(o.DataDir, archiveState),
		Clock:     o.Clock,
		Log:       o.Log,
		Settle:    o.Settle,
		Revision:  o.Engine.Revision,
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Start follows commits: the scheduler learns of new, changed and deleted
// archive servers and, for OnChange, of every commit. It never makes a
// commit wait: the engine's feed only signals.
func (l *Lifecycle) Start(ctx context.Context) error {
	if l.o.NoScheduler {
		return nil
	}
	sub := l.eng.Feed().Follow()
	if err := l.syncServers(ctx); err != nil {
		sub.Close()
		return err
	}
	ctx, l.stopWatch = context.WithCancel(context.WithoutCancel(ctx))
	l.watchDone = make(chan struct{})
	go func() {
		defer close(l.watchDone)
		sub.Watch(ctx, func(events []feed.Event, dropped bool) {
			touched := dropped // dropped: re-read to be sure
			for _, ev := range events {
				if bytes.Contains(ev.Data, []byte(`"`+archiveKind+`"`)) { // no string copy of a restore's 37 MiB
					touched = true
				}
			}
			if touched {
				if err := l.syncServers(ctx); err != nil && ctx.Err() == nil {
					l.log.Error("cannot read the archive servers", "err", err)
				}
			}
			l.sched.Changed()
		})
	}()
	return nil
}

// Close stops the scheduler, abandoning uploads in flight.
func (l *Lifecycle) Close() {
	if l.stopWatch != nil {
		l.stopWatch()
		<-l.watchDone
	}
	l.sched.Close()
}

func (l *Lifecycle) syncServers(ctx context.Context) error {
	var servers []archive.Server
	_, err := l.eng.Snapshot(ctx, []string{archiveKind}, nil, func(k *model.Kind, o model.Object) error {
		servers = append(servers, archive.Server{
			Name:       k.Key(o),
			Remote:     archive.Remote{Host: o.Str("IpAddr"), Port: int(o.Int("Port")), User: o.Str("Username"), Password: o.Str("Password")},
			DstFile:    o.Str("DstFile"),
			Interval:   time.Duration(o.Int("Interval")) * time.Minute,
			OnChange:   o.Bool("OnChange"),
			Nonce:      o.Str("Nonce"),
			Passphrase: o.Str("Passphrase"),
			Timestamp:  o.Str("Timestamp"),
			Attempts:   archive.Attempts{Retries: int(o.Int("RetryCount")), Timeout: time.Duration(o.Int("Timeout")) * time.Second, Backoff: l.o.Backoff},
		})
		return nil
	})
	if err != nil {
		return err
	}
	l.sched.Sync(servers)
	return nil
}

// render makes the saved file of the running configuration.
func (l *Lifecycle) render(ctx context.Context, nonce, passphrase string) ([]byte, uint64, error) {
	data, rev, _, err := l.Render(ctx, nonce, passphrase)
	return data, rev, err
}

// Render writes every config object (but Users: see docs/configfile.md) as
// one document, encrypted when nonce and passphrase are given. It returns
// the file, the revision it holds and how many objects.
func (l *Lifecycle) Render(ctx context.Context, nonce, passphrase string) ([]byte, uint64, int, error) {
	var sealer configfile.Sealer
	if passphrase == "" {
		sealer = l.o.Sealer
	}
	var enc *configfile.Encoder
	var kinds []string
	for _, k := range l.reg.Kinds() {
		if k.Class == model.Config && k.Account == nil {
			kinds = append(kinds, k.Name)
		}
	}
	rev, err := l.eng.Snapshot(ctx, kinds, func(rev uint64) {
		enc = configfile.NewEncoder(configfile.Header{SchemaVersion: l.reg.SchemaVersion(), SwmgrVersion: l.o.Version, Revision: rev, SavedAt: time.Now()}, sealer)
	}, func(k *model.Kind, o model.Object) error {
		enc.Add(k, o)
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	data := enc.Finish()
	if passphrase == "" {
		return data, rev, enc.Objects(), nil
	}
	kdf := configfile.DefaultKDF
	if l.o.KDF != nil {
		kdf = *l.o.KDF
	}
	sealed, err := configfile.Seal(data, nonce, passphrase, kdf)
	clear(data)
	return sealed, rev, enc.Objects(), err
}

// Saved returns the last save's record.
func (l *Lifecycle) Saved() SavedState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.saved
}

func (l *Lifecycle) setSaved(s SavedState) {
	l.mu.Lock()
	l.saved = s
	data, _ := json.Marshal(s)
	l.mu.Unlock()
	if err := atomicfile.Replace(filepath.Join(l.o.DataDir, savedFile), data, 0o600); err != nil {
		l.log.Error("cannot record the saved revision", "err", err)
	}
}

func endpointOf(o model.Object) string { return archive.Endpoint(o.Str("IpAddr"), int(o.Int("Port"))) }
