package lifecycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/archive"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/configfile"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// Name names the lifecycle as a provider.
func (l *Lifecycle) Name() string { return "lifecycle" }

// Bindings are the lifecycle's rows: each action, by the name the model
// declares it under, and its shares of SystemParam's state (the saved
// revision) and ConfigArchiveServer's (the scheduler's).
func (l *Lifecycle) Bindings() []bind.Binding {
	rows := []bind.Binding{
		{Kind: "SaveConfig", Action: &bind.Action{Run: l.saveAction, Needs: l.saveNeeds}},
		{Kind: "ResetConfig", Action: &bind.Action{Run: l.resetAction}},
		{Kind: "ResetConfigToFile", Action: &bind.Action{Run: l.restoreAction}},
		// FlexSwitch 1.x's configuration actions (its config monitor's).
		{Kind: "ApplyConfig", Action: &bind.Action{Run: l.documentAction(true)}},
		{Kind: "ForceApplyConfig", Action: &bind.Action{Run: l.documentAction(false)}},
		{Kind: "ApplyConfigByFile", Action: &bind.Action{Run: l.fileAction(true)}},
		{Kind: "ForceApplyConfigByFile", Action: &bind.Action{Run: l.fileAction(false)}},
	}
	for _, kind := range []string{systemKind, archiveKind} {
		rows = append(rows, bind.Binding{Kind: kind, Driver: &backend.Driver{State: l.stateParts()[kind]}})
	}
	return rows
}

// saveNeeds is what SaveConfig needs beyond its declared role: a local
// file outside the data directory only an admin may write (the service
// writes as root). A destination that does not parse needs nothing more:
// the action refuses it.
func (l *Lifecycle) saveNeeds(c bind.Call) bind.Need {
	loc, err := l.destination(c.Fields)
	if err != nil || loc.Remote || within(l.o.DataDir, loc.Path) {
		return bind.Need{}
	}
	return bind.Need{Role: model.RoleAdmin, Field: saveField(c.Fields),
		Why: fmt.Sprintf("only an admin may save outside the data directory %s (the service writes as root)", l.o.DataDir)}
}

func (l *Lifecycle) defaultFile() string { return filepath.Join(l.o.DataDir, StartupConfig) }

// logged records the action's result in the config log.
func (l *Lifecycle) logged(ctx context.Context, meta engine.Meta, info *engine.LogInfo, err error) error {
	if info == nil {
		return err
	}
	if err != nil {
		l.eng.Log(ctx, meta, info, err)
		return err
	}
	if lerr := l.eng.LogSuccess(ctx, meta, info); lerr != nil {
		l.log.Error("config log write failed", "err", lerr)
	}
	return nil
}

// destination resolves SaveConfig's FileName or DstFileURI. An absolute
// FileName (FlexSwitch's config monitor sends /abs/dir/runningConfig.json)
// is the local file DstFileURI ///abs/dir/runningConfig.json names, under
// the same rules.
func (l *Lifecycle) destination(fields model.Object) (archive.Location, error) {
	name, uri := fields.Str("FileName"), fields.Str("DstFileURI")
	field := "DstFileURI"
	switch {
	case name != "" && uri != "":
		return archive.Location{}, apierr.BadRequest(apierr.CodeInvalidValue, "SaveConfig", "FileName", "give FileName (1.x: a name in the data directory, or an absolute path) or DstFileURI, not both")
	case strings.HasPrefix(name, "/"):
		uri, field = "//"+name, "FileName"
	case name != "":
		if name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.HasPrefix(name, ".") ||
			!utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
			return archive.Location{}, apierr.BadRequest(apierr.CodeInvalidValue, "SaveConfig", "FileName", "FileName %q must be a plain file name in the data directory (no '/', not starting with '.', no control characters)", name)
		}
		loc := archive.Location{Path: filepath.Join(l.o.DataDir, name)}
		return loc, l.notOwn("SaveConfig", "FileName", loc)
	case uri == "":
		return archive.Location{Path: l.defaultFile()}, nil
	}
	loc, err := archive.ParseURI(uri)
	if err != nil {
		if field == "FileName" {
			return loc, apierr.BadRequest(apierr.CodeInvalidValue, "SaveConfig", field, "FileName %q: an absolute FileName names the local file DstFileURI ///path would: %v", name, err)
		}
		return loc, apierr.BadRequest(apierr.CodeInvalidValue, "SaveConfig", field, "DstFileURI: %v", err)
	}
	return loc, l.notOwn("SaveConfig", field, loc)
}

// notOwn refuses a local location that is one of swmgr's own files in the
// data directory (datadir.Files), for anyone: a saved configuration written
// over one breaks swmgr, and one read from one could show its contents.
func (l *Lifecycle) notOwn(kind, field string, loc archive.Location) error {
	if loc.Remote {
		return nil
	}
	if err := datadir.Check(l.o.DataDir, loc.Path); err != nil {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s: %v", field, err)
	}
	return nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// remote finds the credentials for an sftp:// location: those of the
// ConfigArchiveServer of its host (a URI never carries a password).
func (l *Lifecycle) remote(ctx context.Context, kind, field string, loc archive.Location) (archive.Remote, error) {
	var found model.Object
	_, err := l.eng.Snapshot(ctx, []string{archiveKind}, nil, func(_ *model.Kind, o model.Object) error {
		if strings.EqualFold(o.Str("IpAddr"), loc.Host) {
			found = o
		}
		return nil
	})
	if err != nil {
		return archive.Remote{}, err
	}
	if found == nil {
		return archive.Remote{}, apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s: no ConfigArchiveServer has IpAddr %s; create one with its Username and Password (a URI never carries a password)", field, loc.Host)
	}
	r := archive.Remote{Host: loc.Host, Port: loc.Port, User: loc.User, Password: found.Str("Password")}
	if r.Port == 0 {
		r.Port = int(found.Int("Port"))
	}
	if r.User == "" {
		r.User = found.Str("Username")
	}
	return r, nil
}

func attempts(fields model.Object, backoff time.Duration) archive.Attempts {
	return archive.Attempts{Retries: int(fields.Int("RetryCount")), Timeout: time.Duration(fields.Int("Timeout")) * time.Second, Backoff: backoff}
}

// SaveResult is SaveConfig's answer.
type SaveResult struct {
	Result    string
	File      string
	Revision  uint64
	Objects   int
	Encrypted bool
	DryRun    bool `json:",omitempty"`
}

func (l *Lifecycle) saveAction(ctx context.Context, c bind.Call) (bind.Result, error) {
	res, err := l.Save(ctx, c.Fields, c.DryRun)
	if err := l.logged(ctx, c.Meta, c.Log, err); err != nil {
		return bind.Result{}, err
	}
	return bind.Result{Value: res}, nil
}

// Save runs SaveConfig.
func (l *Lifecycle) Save(ctx context.Context, fields model.Object, dry bool) (*SaveResult, error) {
	loc, err := l.destination(fields)
	if err != nil {
		return nil, err
	}
	loc.Path = archive.Stamp(loc.Path, fields.Str("Timestamp"), l.o.NowForStamps())
	var r archive.Remote
	if loc.Remote {
		if r, err = l.remote(ctx, "SaveConfig", "DstFileURI", loc); err != nil {
			return nil, err
		}
	}
	nonce, pass := fields.Str("Nonce"), fields.Str("Passphrase")
	res := &SaveResult{Result: "Success", File: loc.String(), Encrypted: pass != "", DryRun: dry}
	if dry {
		if err := l.unconfirmed(l.eng.Revision()); err != nil {
			return nil, err
		}
		if !loc.Remote {
			if err := archive.CheckLocal(loc.Path); err != nil {
				return nil, transferError("SaveConfig", saveField(fields), err)
			}
		}
		res.Revision = l.eng.Revision()
		return res, nil
	}
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	data, rev, n, err := l.Render(ctx, nonce, pass)
	if err != nil {
		return nil, err
	}
	// After the snapshot: a confirmed commit made just before it is in it.
	if err := l.unconfirmed(rev); err != nil {
		return nil, err
	}
	res.Revision, res.Objects = rev, n
	if loc.Remote {
		err = l.sftp.Upload(ctx, r, loc.Path, data, attempts(fields, l.o.Backoff))
	} else {
		err = archive.WriteLocal(loc.Path, data)
	}
	if err != nil {
		return nil, transferError("SaveConfig", saveField(fields), err)
	}
	l.setSaved(SavedState{Revision: rev, At: time.Now().UTC(), To: res.File})
	return res, nil
}

// unconfirmed refuses to save a configuration at revision rev that holds a
// commit still awaiting confirmation: the saved file is what the switch
// starts from, and it would bring back, at the next start, a change that
// was rolled back for want of a confirmation (the operator may have lost
// the switch through it). Confirm first, or let it roll back.
func (l *Lifecycle) unconfirmed(rev uint64) error {
	p, err := l.eng.PendingConfirm()
	if err != nil {
		return err
	}
	if p == nil || p.Revision > rev {
		return nil
	}
	return apierr.New(http.StatusConflict, apierr.CodeConflict, "SaveConfig", "",
		"revision %d awaits confirmation until %s: confirm it (POST %srevisions/%d/confirm) or let it roll back, then save; a saved configuration must not bring back at the next start a change that was never confirmed",
		p.Revision, time.Unix(0, p.Deadline).UTC().Format(time.RFC3339), model.APIPrefix, p.Revision)
}

// saveField is the field of SaveConfig that names its destination.
func saveField(fields model.Object) string {
	if fields.Str("FileName") != "" {
		return "FileName"
	}
	return "DstFileURI"
}

// transferError turns a failed write, upload or download into the client's
// error: a 400 naming the URI's problem (the server that cannot be reached,
// the password refused, the host key changed), or a 409 for a local file
// swmgr will not overwrite.
func transferError(kind, field string, err error) error {
	if errors.Is(err, archive.ErrNotConfigFile) {
		return apierr.New(http.StatusConflict, apierr.CodeConflict, kind, field, "%s: %v", field, err)
	}
	return apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s: %v", field, err)
}

func (l *Lifecycle) resetAction(ctx context.Context, c bind.Call) (bind.Result, error) {
	meta, info, dry := c.Meta, c.Log, c.DryRun
	meta.Source = "reset"
	out, err := l.eng.Replace(ctx, engine.Replacement{Keep: l.keepAdmins}, engine.Request{Meta: meta, Log: logIf(info, dry), DryRun: dry, OmitDiffs: true})
	if err != nil {
		if dry {
			return bind.Result{}, l.logged(ctx, meta, info, err)
		}
		return bind.Result{}, err // Replace logged it
	}
	return bind.Result{Value: commitValue(out, nil), Revision: out.Revision}, nil
}

// keepAdmins is what a reset does to accounts (model.Account): those of
// the admin group stay, so the switch keeps an admin who can log in; every
// other is deleted.
func (l *Lifecycle) keepAdmins(k *model.Kind, o model.Object) bool {
	return k.Account != nil && o.Str(k.Account.GroupField) == l.o.AdminGroup
}

// keepUsers is what a restore does to accounts: nothing (a file holds none).
func keepUsers(k *model.Kind, _ model.Object) bool { return k.Account != nil }

func logIf(info *engine.LogInfo, dry bool) *engine.LogInfo {
	if dry {
		return nil
	}
	return info
}

func commitValue(out *engine.Outcome, extra map[string]any) map[string]any {
	body := map[string]any{"Result": "Success"}
	if out.DryRun {
		body["DryRun"] = true
		diffs := out.Diffs
		if diffs == nil {
			diffs = []engine.Diff{}
		}
		if len(diffs) > maxDryRunDiff {
			body["Truncated"] = len(diffs) - maxDryRunDiff
			diffs = diffs[:maxDryRunDiff]
		}
		body["Changes"] = diffs
	} else {
		body["Revision"] = out.Revision
		body["Changes"] = out.Changes
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func (l *Lifecycle) restoreAction(ctx context.Context, c bind.Call) (bind.Result, error) {
	return l.fromFile(ctx, c, false)
}

// fileAction runs ApplyConfigByFile (merge) or ForceApplyConfigByFile: the
// document of a file, read as ResetConfigToFile reads it.
func (l *Lifecycle) fileAction(merge bool) func(context.Context, bind.Call) (bind.Result, error) {
	return func(ctx context.Context, c bind.Call) (bind.Result, error) {
		return l.fromFile(ctx, c, merge)
	}
}

// fromFile applies the document of the file SrcFileURI names: replacing
// the running configuration with it, or merging it in.
func (l *Lifecycle) fromFile(ctx context.Context, c bind.Call, merge bool) (bind.Result, error) {
	fields, meta, info, dry := c.Fields, c.Meta, c.Log, c.DryRun
	meta.Source = "restore"
	if merge {
		meta.Source = "apply"
	}
	src := fields.Str("SrcFileURI")
	doc, loc, err := l.fetch(ctx, c.Kind.Name, src, fields)
	if err != nil {
		return bind.Result{}, l.logged(ctx, meta, info, err)
	}
	// The answer's figures are taken now: the engine takes the objects.
	extra := map[string]any{"File": loc.String(), "Objects": doc.Count(), "Format": doc.Format, "SavedRevision": doc.Revision}
	out, err := l.apply(ctx, c.Kind.Name, "SrcFileURI", doc, merge, engine.Request{Meta: meta, Log: logIf(info, dry), DryRun: dry})
	if err != nil {
		if dry {
			l.logged(ctx, meta, info, err)
		}
		return bind.Result{}, err
	}
	if !merge && !dry && out.Revision != 0 && loc.Path == l.defaultFile() && !loc.Remote {
		l.setSaved(SavedState{Revision: out.Revision, At: time.Now().UTC(), To: loc.String()})
	}
	return bind.Result{Value: commitValue(out, extra), Revision: out.Revision}, nil
}

// documentAction runs ApplyConfig (merge) or ForceApplyConfig: the
// document is the body's ConfigData, read as a format 1 file (FlexSwitch's
// bare {"ConfigData": ...}: secrets in clear, Users ignored) whose objects
// are in the current schema version.
func (l *Lifecycle) documentAction(merge bool) func(context.Context, bind.Call) (bind.Result, error) {
	return func(ctx context.Context, c bind.Call) (bind.Result, error) {
		meta, info, dry := c.Meta, c.Log, c.DryRun
		meta.Source = "apply"
		raw, _ := c.Fields["ConfigData"].(json.RawMessage)
		// A request's objects are in the current form, as a REST body's.
		data := make([]byte, 0, len(raw)+40)
		data = fmt.Appendf(data, `{"SchemaVersion":%d,"ConfigData":`, l.reg.SchemaVersion())
		data = append(append(data, raw...), '}')
		doc, err := l.decode(c.Kind.Name, "ConfigData", bytes.NewReader(data), "", "")
		if err != nil {
			return bind.Result{}, l.logged(ctx, meta, info, err)
		}
		extra := map[string]any{"Objects": doc.Count()}
		out, err := l.apply(ctx, c.Kind.Name, "ConfigData", doc, merge, engine.Request{Meta: meta, Log: logIf(info, dry), DryRun: dry})
		if err != nil {
			if dry {
				l.logged(ctx, meta, info, err)
			}
			return bind.Result{}, err
		}
		return bind.Result{Value: commitValue(out, extra), Revision: out.Revision}, nil
	}
}

// fetch reads, decrypts and decodes a saved file for the action kind.
// Every failure is a 4xx (or a 502 for a server that cannot be reached)
// and changes nothing.
func (l *Lifecycle) fetch(ctx context.Context, kind, uri string, fields model.Object) (*configfile.Document, archive.Location, error) {
	const field = "SrcFileURI"
	loc := archive.Location{Path: l.defaultFile()}
	if uri != "" {
		var err error
		if loc, err = archive.ParseURI(uri); err != nil {
			return nil, loc, apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "SrcFileURI: %v", err)
		}
		if err := l.notOwn(kind, field, loc); err != nil {
			return nil, loc, err
		}
	}
	nonce, pass := fields.Str("Nonce"), fields.Str("Passphrase")
	if loc.Remote {
		r, err := l.remote(ctx, kind, field, loc)
		if err != nil {
			return nil, loc, err
		}
		var doc *configfile.Document
		err = l.sftp.Fetch(ctx, r, loc.Path, attempts(fields, l.o.Backoff), func(rd io.Reader) error {
			var err error
			doc, err = l.decode(kind, field, rd, nonce, pass)
			return err
		})
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return nil, loc, ae // the content, not the transfer
		}
		if err != nil {
			return nil, loc, transferError(kind, field, err)
		}
		return doc, loc, nil
	}
	f, err := archive.OpenLocal(loc.Path)
	if err != nil {
		return nil, loc, apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "SrcFileURI: cannot read %s: %v", loc.Path, err)
	}
	defer f.Close()
	doc, err := l.decode(kind, field, f, nonce, pass)
	var ae *apierr.Error
	if err != nil && !errors.As(err, &ae) {
		err = apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "SrcFileURI: cannot read %s: %v", loc.Path, err)
	}
	if err != nil {
		return nil, loc, err
	}
	return doc, loc, nil
}

// decode reads a saved file (or the document of field of the action kind)
// from r: a plain one is decoded as it is read (never held whole); an
// encrypted one is read whole (at most configfile.MaxFileSize: its tag is
// checked before any of it is used), decrypted, then decoded. Every error
// but a failed read is a 400 (an *apierr.Error).
func (l *Lifecycle) decode(kind, field string, r io.Reader, nonce, pass string) (*configfile.Document, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(configfile.Magic))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	src := io.Reader(br)
	enc := configfile.IsEncrypted(head)
	switch {
	case enc && pass == "":
		return nil, apierr.BadRequest(apierr.CodeMissingField, kind, "Passphrase", "the file is encrypted: give its Nonce and Passphrase")
	case !enc && pass != "":
		return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, "Passphrase", "a Passphrase was given but the file is not encrypted (refused: an encrypted file may have been replaced)")
	case enc:
		data, err := io.ReadAll(io.LimitReader(br, configfile.MaxFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("read the file: %w", err)
		}
		if len(data) > configfile.MaxFileSize {
			return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s is larger than %d bytes, the most a restore reads", what(field), configfile.MaxFileSize)
		}
		plain, err := configfile.Open(data, nonce, pass)
		if err != nil {
			return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, "Passphrase", "%v", err)
		}
		src = bytes.NewReader(plain)
	}
	doc, err := configfile.Decode(src, l.reg, configfile.DecodeOptions{Sealer: l.o.Sealer, Encrypted: enc})
	if err != nil {
		return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s is not a valid configuration: %v", what(field), err)
	}
	if len(doc.Unknown) > 0 {
		return nil, apierr.BadRequest(apierr.CodeUnknownKind, kind, field, "%s holds kinds this switch does not have: %s", what(field), strings.Join(doc.Unknown, ", "))
	}
	return doc, nil
}

// what names the document of field in messages.
func what(field string) string {
	if field == "SrcFileURI" {
		return "the file"
	}
	return field
}

// apply replaces the running configuration with doc (or, merge, merges doc
// into it) in one commit, for the action kind whose field gave doc. Users
// are left alone (docs/configfile.md says why).
func (l *Lifecycle) apply(ctx context.Context, kind, field string, doc *configfile.Document, merge bool, req engine.Request) (*engine.Outcome, error) {
	req.OmitDiffs = true // the answer counts the changes (commitValue)
	return l.replace(ctx, kind, field, doc, merge, keepUsers, req)
}

// replace is apply keeping the running objects keep says (accounts at
// least: a document's are never taken).
func (l *Lifecycle) replace(ctx context.Context, kind, field string, doc *configfile.Document, merge bool, keep func(*model.Kind, model.Object) bool, req engine.Request) (*engine.Outcome, error) {
	objs := make(map[string][]model.Object, len(doc.Objects))
	for name, list := range doc.Objects {
		if k := l.reg.Named(name); k == nil || k.Account == nil {
			objs[name] = list
		}
	}
	out, err := l.eng.Replace(ctx, engine.Replacement{Objects: objs, Keep: keep, Merge: merge}, req)
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s does not fit this switch: %s", what(field), ae.Message)
		}
		return nil, err
	}
	return out, nil
}

// LoadStartup restores uri (default: the data directory's startup-config)
// on a new data directory, as FlexSwitch did at boot. A missing default
// file is not an error; a named one must exist.
func (l *Lifecycle) LoadStartup(ctx context.Context, uri, nonce, passphrase string) (loaded bool, err error) {
	meta := engine.Meta{Source: "startup", Comment: "startup configuration"}
	if uri == "" {
		f, err := archive.OpenLocal(l.defaultFile())
		if err != nil {
			return false, nil
		}
		f.Close()
	}
	doc, loc, err := l.fetch(ctx, "ResetConfigToFile", uri, model.Object{"RetryCount": int64(3), "Timeout": int64(30), "Nonce": nonce, "Passphrase": passphrase})
	if err != nil {
		return false, fmt.Errorf("startup configuration %s: %w", uri, err)
	}
	out, err := l.apply(ctx, "ResetConfigToFile", "SrcFileURI", doc, false, engine.Request{Meta: meta, Log: &engine.LogInfo{API: "startupconfig", Operation: "POST", Data: fmt.Sprintf(`{"SrcFileURI":%q}`, loc.String())}})
	if err != nil {
		return false, fmt.Errorf("startup configuration %s: %w", loc, err)
	}
	// The running configuration is the startup file's: nothing unsaved.
	l.setSaved(SavedState{Revision: out.Revision, At: time.Now().UTC(), To: loc.String()})
	l.log.Info("startup configuration loaded", "file", loc.String(), "objects", doc.Count(), "revision", out.Revision)
	return true, nil
}

// ApplyDocument replaces the running configuration with a plain saved
// configuration document (data, as a saved file holds it) in one commit
// made with req (its Meta, Log, Confirm, IfRevision, Allow): what
// provisioning and an intent apply. kind and field name the document in
// errors. A document holding accounts (User), or objects of the kinds
// held names, is refused whole: a saved file never carries accounts, so
// one that does was not written by a save; the running objects of those
// kinds are kept as they are.
func (l *Lifecycle) ApplyDocument(ctx context.Context, kind, field string, data []byte, held []string, req engine.Request) (*engine.Outcome, error) {
	doc, keep, err := l.heldDocument(kind, field, data, held)
	if err != nil {
		return nil, err
	}
	req.OmitDiffs = true
	return l.replace(ctx, kind, field, doc, false, keep, req)
}

// CompareDocument is the difference between the running configuration and
// the document ApplyDocument would make of data and held: the changes a
// dry run of it reports (secrets masked). Nothing is committed or logged.
func (l *Lifecycle) CompareDocument(ctx context.Context, kind, field string, data []byte, held []string) ([]engine.Diff, error) {
	doc, keep, err := l.heldDocument(kind, field, data, held)
	if err != nil {
		return nil, err
	}
	out, err := l.replace(ctx, kind, field, doc, false, keep, engine.Request{DryRun: true, Meta: engine.Meta{Source: "compare"}})
	if err != nil {
		return nil, err
	}
	return out.Diffs, nil
}

// heldDocument decodes data, refusing a document that holds accounts or a
// kind of held, and says which running objects a replace by it keeps.
func (l *Lifecycle) heldDocument(kind, field string, data []byte, held []string) (*configfile.Document, func(*model.Kind, model.Object) bool, error) {
	doc, err := l.decode(kind, field, bytes.NewReader(data), "", "")
	if err != nil {
		return nil, nil, err
	}
	for name := range doc.Objects {
		if k := l.reg.Named(name); k != nil && (k.Account != nil || slices.Contains(held, k.Name)) {
			return nil, nil, apierr.New(http.StatusForbidden, apierr.CodeForbidden, kind, field, "%s holds %s objects, which it may not change", what(field), name)
		}
	}
	keep := func(k *model.Kind, o model.Object) bool { return k.Account != nil || slices.Contains(held, k.Name) }
	return doc, keep, nil
}
