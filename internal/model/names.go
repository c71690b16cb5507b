package model

// The names of the engine's own actions, which the REST layer binds to the
// history (Rollback) and the config log (ClearConfigLog). Elsewhere a kind
// or an action is known by its declaration (Kind's fields), never by a
// name written out.
const (
	ActionRollback       = "Rollback"
	ActionClearConfigLog = "ClearConfigLog"
)
