package lifecycle

import (
	"context"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// systemKind is the kind whose state shows the saved and running revisions.
const systemKind = "SystemParam"

// stateParts are the lifecycle's shares of config kinds' state, by kind
// name: SystemParam's saved and running revisions, and each
// ConfigArchiveServer's archive state.
func (l *Lifecycle) stateParts() map[string]func(context.Context, model.Object) (model.Object, error) {
	return map[string]func(context.Context, model.Object) (model.Object, error){systemKind: l.systemState, archiveKind: l.archiveState}
}

func (l *Lifecycle) systemState(_ context.Context, _ model.Object) (model.Object, error) {
	saved := l.Saved()
	running := l.eng.Revision()
	st := model.Object{
		"RunningRevision": int64(running),
		"SavedRevision":   int64(saved.Revision),
		"UnsavedChanges":  running != saved.Revision,
	}
	if !saved.At.IsZero() {
		st["LastSaved"] = saved.At.Format(time.RFC3339) + " to " + saved.To
	}
	return st, nil
}

func (l *Lifecycle) archiveState(_ context.Context, o model.Object) (model.Object, error) {
	st := model.Object{}
	name := l.reg.Lookup(model.Config, archiveKind).Key(o)
	if pin, ok := l.sftp.Pins.Get(endpointOf(o)); ok {
		st["HostKey"] = pin.Fingerprint
	}
	as, ok := l.sched.State(name)
	if !ok {
		return st, nil
	}
	st["LastAttempt"] = stamp(as.LastAttempt)
	st["LastSuccess"] = stamp(as.LastSuccess)
	st["LastError"] = as.LastError
	st["LastFile"] = as.LastFile
	st["LastRevision"] = int64(as.LastRevision)
	st["NextRun"] = stamp(as.NextRun)
	st["Uploads"] = as.Uploads
	st["Failures"] = as.Failures
	return st, nil
}

// ArchiveDriver is the archive scheduler's driver of ConfigArchiveServer:
// nothing to apply (the scheduler follows the change feed), by kind name.
func ArchiveDriver() map[string]*backend.Driver {
	return map[string]*backend.Driver{archiveKind: {Apply: func(context.Context, backend.Change) (model.Object, error) { return nil, nil }}}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// ArchiveProvider names the archive scheduler in the binding table.
const ArchiveProvider = "archive scheduler"

// Archive is the archive scheduler's config rows: ConfigArchiveServer is
// applied by nothing at the switch (the lifecycle's scheduler follows the
// stored servers); its state is the lifecycle's.
func Archive() bind.Provider { return archiveRows{} }

type archiveRows struct{}

func (archiveRows) Name() string { return ArchiveProvider }

func (archiveRows) Bindings() []bind.Binding { return bind.Drivers(ArchiveDriver()) }
