package model

// The names of the engine's own actions, which the history (Rollback) and
// the config log (ClearConfigLog) bind to themselves in their rows of the
// binding table. Elsewhere a kind or an action is known by its declaration
// (Kind's fields), never by a name written out.
const (
	ActionRollback       = "Rollback"
	ActionClearConfigLog = "ClearConfigLog"
)
