package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// Entry operations.
const (
	opCreate = "create"
	opUpdate = "update"
	opDelete = "delete"
	opAction = "execute"
)

// entry is one pending change, as showunapplied lists it: an object to
// create, update or delete (staged in the server-side candidate as soon as
// it is complete) or an action that apply runs.
type entry struct {
	kind   *model.Kind
	op     string
	key    model.Object
	cmd    string       // the command that named the object
	sets   []*setting   // what the user typed, in order
	base   model.Object // the object as it was when first changed (updates)
	staged bool         // a create sent to the candidate
	direct bool         // a create apply sends directly (it has a value never stored)
	// problem is why the server refuses the entry as it is (a field that
	// needs another); the entry is not valid until it is fixed.
	problem string
	at      time.Time
}

func (e *entry) hasTransient() bool {
	for _, st := range e.sets {
		if st.field.Secret == model.Transient {
			return true
		}
	}
	return false
}

// setting is one attribute the user set.
type setting struct {
	field  *model.Field
	value  any
	cmd    string
	at     time.Time
	staged bool // sent to the candidate
}

func (e *entry) get(name string) (any, bool) {
	for _, st := range e.sets {
		if st.field.Name == name {
			return st.value, true
		}
	}
	return nil, false
}

func (e *entry) put(f *model.Field, v any, cmd string) {
	if f.Secret != model.Public && display(v) != "" {
		cmd = strings.ReplaceAll(cmd, display(v), "********")
	}
	for _, st := range e.sets {
		if st.field == f {
			st.value, st.cmd, st.at, st.staged = v, cmd, time.Now(), false
			return
		}
	}
	e.sets = append(e.sets, &setting{field: f, value: v, cmd: cmd, at: time.Now()})
}

func (e *entry) drop(f *model.Field) {
	e.sets = slices.DeleteFunc(e.sets, func(st *setting) bool { return st.field == f })
}

// object is the entry's fields as a request body.
func (e *entry) object() model.Object {
	o := model.Object{}
	for n, v := range e.key {
		o[n] = v
	}
	for _, st := range e.sets {
		o[st.field.Name] = st.value
	}
	return o
}

// missing lists the required fields a create still lacks.
func (e *entry) missing() []string {
	var out []string
	for _, f := range e.kind.Fields {
		if !f.Required {
			continue
		}
		if _, ok := e.key[f.Name]; ok {
			continue
		}
		if _, ok := e.get(f.Name); !ok {
			out = append(out, f.Name)
		}
	}
	return out
}

func (e *entry) valid() bool {
	return e.problem == "" && (e.op != opCreate || len(e.missing()) == 0)
}

var configControls = []*option{
	{words: []string{"apply"}, control: "apply", help: "Apply the pending config (apply check|comment <text>|confirmed [<minutes>])"},
	{words: []string{"showunapplied"}, control: "showunapplied", help: "Show the pending config (showunapplied full)"},
	{words: []string{"clearunapplied"}, control: "clearunapplied", help: "Discard the pending config"},
	{words: []string{"exit"}, control: "exit", help: "Leave this context"},
	{words: []string{"end"}, control: "end", help: "Return to enable mode"},
	{words: []string{"quit"}, control: "quit", help: "Exit the shell"},
	{words: []string{"show"}, control: "show", help: "Show running system information"},
	{words: []string{"where"}, control: "where", help: "Show the current context"},
	{words: []string{"help"}, control: "help", help: "Show the commands of this context"},
	{words: []string{"no"}, control: "no", help: "Delete an object or revert an attribute to its default"},
	{words: []string{"rollback"}, control: "rollback", help: "rollback <revision>: load the changes back to that revision (show config history) into the pending config; rollback previous <n>: to n commits ago (Junos's rollback <n>)"},
	{words: []string{"do"}, control: "do", help: "Run an exec command without leaving config (do show run, do write memory)"},
	{words: []string{"write", "memory"}, control: "write", help: "Save the running configuration (SaveConfig)"},
	{words: []string{"load", "merge", "terminal"}, control: "load", help: "Read commands (show run form) until Ctrl-D or a line \".\""},
	{words: []string{"confirm"}, control: "confirm", help: "Confirm the last confirmed apply"},
	{words: []string{"cancel"}, control: "cancel", help: "Cancel the last confirmed apply: roll it back now"},
	{words: []string{"terminal", "length"}, control: "terminal", help: "Lines per page on a terminal (0: no pager)"},
}

// configOptions are the commands of the current config context.
func (s *Session) configOptions(withControls bool) []*option {
	var out []*option
	if withControls {
		out = append(out, configControls...)
	}
	var kinds []*model.Kind
	if len(s.stack) == 0 {
		kinds = s.cat.top
	} else {
		fr := s.stack[len(s.stack)-1]
		kinds = s.cat.children[fr.kind.Name]
		for _, f := range s.leafFields(fr) {
			out = append(out, &option{words: []string{f.CLIWord()}, field: f, help: fieldHelp(f)})
			if f.CLIWord() != f.Name {
				out = append(out, &option{words: []string{f.Name}, field: f, help: fieldHelp(f)})
			}
		}
	}
	for _, k := range kinds {
		out = append(out, &option{words: k.CLI.Words, kind: k, help: k.Doc})
	}
	return out
}

// leafFields are the fields set by words inside a context.
func (s *Session) leafFields(fr *frame) []*model.Field {
	k := fr.kind
	vf := s.cat.valueField(k)
	var out []*model.Field
	for _, f := range k.Fields {
		if f.ReadOnly || (f.Key && fr.entry == nil) || f == vf || f.Name == k.CLI.Inherit || f.Type == model.Record || (f.Type == model.RecordList && recordIdentity(f) == nil) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (s *Session) execConfig(toks []token, line string) error {
	neg := false
	if strings.EqualFold(toks[0].text, "no") && !toks[0].quoted {
		neg = true
		if len(toks) == 1 {
			s.printf("ERROR: no needs a command to negate\n")
			return errFailed
		}
	}
	rest := toks
	if neg {
		rest = toks[1:]
	}
	matched, used, bad, amb := resolve(rest, s.configOptions(!neg))
	if matched == nil {
		if neg {
			bad++
		}
		return s.badToken(line, toks, bad, amb)
	}
	args := rest[used:]
	o := matched[0]
	switch {
	case o.control != "":
		return s.configControl(o.control, args, line, toks, used)
	case o.field != nil:
		return s.leafCommand(s.stack[len(s.stack)-1], o.field, args, neg, line)
	}
	// Two kinds may share words (`user <Name>` opens a User, `user <Name>
	// password <P>` is the UserPassword one-liner): words after the value
	// pick the one-liner.
	k := o.kind
	for _, m := range matched {
		if m.kind != nil && m.kind.CLI.Line == (len(args) > 1) {
			k = m.kind
		}
	}
	return s.kindCommand(k, args, neg, line)
}

func (s *Session) configControl(c string, args []token, line string, toks []token, used int) error {
	switch c {
	case "apply":
		return s.applyCommand(args, line)
	case "showunapplied":
		full := len(args) == 1 && len(matchWord(args[0].text, []string{"full"})) == 1
		if len(args) > 0 && !full {
			if len(args) == 1 && len(matchWord(args[0].text, []string{"diff"})) == 1 {
				return s.showPendingDiff()
			}
			return s.badToken(line, toks, used, nil)
		}
		s.showUnapplied(full)
	case "clearunapplied":
		s.printf("Clearing Unapplied Config\n")
		s.clearPending()
		s.stack = nil
	case "exit":
		if len(s.stack) > 0 {
			s.stack = s.stack[:len(s.stack)-1]
			return nil
		}
		return s.exitConfig()
	case "end":
		return s.exitConfig()
	case "quit":
		if s.HasPending() && !s.askDiscard() {
			return nil
		}
		s.clearPending()
		s.printf("Quiting Shell\n")
		return errQuit
	case "show":
		return s.show(args, line)
	case "where":
		s.printf("cmd: %s\n", s.where())
	case "help":
		s.help(nil)
	case "rollback":
		return s.rollbackCommand(args)
	case "do":
		return s.doExec(args, line)
	case "write":
		return s.writeMemory()
	case "load":
		return s.loadMerge()
	case "confirm":
		return s.doConfirm(args)
	case "cancel":
		return s.doCancel(args)
	case "terminal":
		return s.terminalLength(args)
	}
	return nil
}

// exitConfig leaves config mode, asking FlexSwitch's question first when
// something is pending; yes discards it.
func (s *Session) exitConfig() error {
	if s.HasPending() && !s.askDiscard() {
		return nil
	}
	s.clearPending()
	s.stack = nil
	s.mode = EnableMode
	return nil
}

func (s *Session) askDiscard() bool {
	if s.opts.Ask == nil {
		return false
	}
	ans, err := s.opts.Ask("Are you sure you want to exit? You have pending config [no]yes:")
	if err != nil {
		return false
	}
	switch strings.TrimSpace(ans) {
	case "yes", "y", "Y", "YES", "Yes":
		return true
	}
	return false
}

// clearPending drops every pending entry and the candidate.
func (s *Session) clearPending() {
	if s.cand != nil {
		ctx, cancel := s.rctx()
		s.cand.Discard(ctx)
		cancel()
		s.cand = nil
	}
	s.pending = nil
}

// ---- contexts and one-liners ----

// checkValue parses a typed value for f, with FlexSwitch's messages.
func checkValue(f *model.Field, text string) (any, string) {
	switch f.Type {
	case model.Int:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			if f.Range != nil {
				return nil, fmt.Sprintf("ERROR: Invalid Value %s, must be beteween %d-%d", text, f.Range.Min, f.Range.Max)
			}
			return nil, fmt.Sprintf("ERROR: Invalid Value %s, must be a number", text)
		}
		if f.Range != nil && (n < f.Range.Min || n > f.Range.Max) {
			return nil, fmt.Sprintf("ERROR: Invalid Value %s, must be beteween %d-%d", text, f.Range.Min, f.Range.Max)
		}
		return n, ""
	case model.Bool:
		switch strings.ToLower(text) {
		case "true", "yes", "on", "enable", "enabled":
			return true, ""
		case "false", "no", "off", "disable", "disabled":
			return false, ""
		}
		return nil, fmt.Sprintf("ERROR: Invalid Selection %s, must be one of True,False", text)
	}
	if len(f.Enum) > 0 {
		for _, e := range f.Enum {
			if strings.EqualFold(e, text) {
				return e, ""
			}
		}
		return nil, fmt.Sprintf("ERROR: Invalid Selection %s, must be one of %s", text, strings.Join(f.Enum, ","))
	}
	return text, ""
}

// pathValue reads the value token after a command's words: FlexSwitch
// writes a port as its prefix word and number (`interface fpPort 1`).
func joinValue(k *model.Kind, v string) string {
	if !k.CLI.Join {
		return v
	}
	w := k.CLI.Words[len(k.CLI.Words)-1]
	if strings.HasPrefix(strings.ToLower(v), strings.ToLower(w)) {
		return v
	}
	return w + v
}

// promptFor is FlexSwitch's prompt rule: from (config)# the segments of
// the words, and the last token when the path has three or more; inside a
// context the segments and the value always.
func (s *Session) promptFor(k *model.Kind, value string, extra string) string {
	var segs []string
	for _, p := range k.CLI.Prompt {
		if p != "" {
			segs = append(segs, p)
		}
	}
	p := ""
	if len(segs) > 0 {
		p = "-" + strings.Join(segs, "-")
	}
	last := value
	ntok := len(k.CLI.Words)
	if value != "" {
		ntok++
	}
	if extra != "" {
		ntok++
		last = extra
	} else if value == "" {
		last = k.CLI.Words[len(k.CLI.Words)-1]
	}
	// A last word declared with an empty segment hides the value
	// (`interface logical Loopback1` is (config-if)#).
	hidden := len(k.CLI.Prompt) == len(k.CLI.Words) && k.CLI.Prompt[len(k.CLI.Prompt)-1] == "" && extra == ""
	if len(s.stack) == 0 {
		if ntok >= 3 && !hidden {
			p += "-" + last
		}
		return p
	}
	if last != "" && (value != "" || extra != "") {
		p += "-" + last
	}
	return p
}

func (s *Session) kindCommand(k *model.Kind, args []token, neg bool, line string) error {
	c := k.CLI
	vf := s.cat.valueField(k)
	value, raw := "", ""
	key := model.Object{}
	var leadRaw []string
	for _, lf := range s.cat.leadKeys(k) {
		if len(args) == 0 || args[0].text == "" && !args[0].quoted {
			s.printf("ERROR: Value expected for %s: %s\n", strings.Join(c.Words, " "), lf.CLIWord())
			return errFailed
		}
		v, msg := checkValue(lf, args[0].text)
		if msg != "" {
			s.printf("%s\n", msg)
			return errFailed
		}
		key[lf.Name] = v
		leadRaw = append(leadRaw, args[0].text)
		args = args[1:]
	}
	// A list as the value (`ip helper-address 192.0.2.67`): each command
	// adds one element, `no <words> <element>` removes it (the last one
	// removes the object), `no <words>` removes the object.
	listValue := vf != nil && vf.Type == model.StringList
	if (vf != nil || c.Join) && !(listValue && neg && len(args) == 0) {
		if len(args) == 0 || args[0].text == "" && !args[0].quoted {
			s.printf("ERROR: Value expected for %s\n", strings.Join(c.Words, " "))
			return errFailed
		}
		raw = args[0].text
		value = joinValue(k, raw)
		args = args[1:]
	}
	cmd := strings.Join(append(append(slices.Clone(c.Words), leadRaw...), raw), " ")
	cmd = strings.TrimSpace(cmd)
	var typedValue any = value
	if vf != nil && !listValue {
		v, msg := checkValue(vf, value)
		if msg != "" {
			s.printf("%s\n", msg)
			return errFailed
		}
		typedValue = v
	}
	if s.cat.isAction(k) {
		return s.actionCommand(k, vf, typedValue, raw, args, neg, cmd)
	}
	if vf != nil && vf.Key {
		key[vf.Name] = typedValue
	} else if c.Join {
		if kf := k.Keys(); len(kf) > 0 {
			key[kf[len(kf)-1].Name] = value
		}
	}
	if c.Inherit != "" && len(s.stack) > 0 {
		parent := s.stack[len(s.stack)-1]
		key[c.Inherit] = s.cat.inherited(parent.kind, parent.key)
	}
	key = keyOf(k, key)
	// Every value of a key with several parts shows in the prompt:
	// (config-ip-route-10.2.0.0-255.255.0.0)#.
	fr := &frame{kind: k, key: key, cmd: cmd, prompt: s.promptFor(k, strings.Join(append(leadRaw, raw), "-"), ""), depth: len(s.stack) + 1}
	if neg && len(args) == 0 {
		if listValue && raw != "" {
			if cur := s.currentList(fr, vf); !slices.Equal(cur, []string{raw}) {
				return s.leafCommand(fr, vf, []token{{text: raw}}, true, cmd)
			}
		}
		return s.deleteObject(k, key, cmd)
	}
	if listValue {
		// Opened as a context without a value, then given the element as
		// its list word would be.
		if err := s.openObject(fr, nil, nil); err != nil {
			return err
		}
		if err := s.leafCommand(fr, vf, []token{{text: raw}}, false, cmd); err != nil {
			return err
		}
	} else if err := s.openObject(fr, vf, typedValue); err != nil {
		return err
	}
	s.stack = append(s.stack, fr)
	if neg {
		// `no lldp enable`: the negated command of the context.
		args = append([]token{{text: "no", pos: args[0].pos}}, args...)
	}
	if len(args) > 0 {
		// A one-liner (`system Hostname leaf1`): the rest is a command of
		// the new context, which is left again.
		err := s.execConfig(args, line)
		if len(s.stack) > 0 && s.stack[len(s.stack)-1] == fr {
			s.stack = s.stack[:len(s.stack)-1]
		}
		return err
	}
	return nil
}

// openObject prepares the context's object: a new one is queued for
// creation, a value that is not a key (`router bgp 65001`, `ip address
// A/L`) is set.
func (s *Session) openObject(fr *frame, vf *model.Field, value any) error {
	k := fr.kind
	if e := s.findEntry(k, fr.key); e != nil && e.op != opDelete {
		if vf != nil && !vf.Key {
			return s.setField(fr, vf, value, fr.cmd)
		}
		return nil
	}
	obj, found, err := s.getOne(s.view(), k, fr.key)
	if err != nil {
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	if !found {
		if !k.Creatable() {
			s.printf("ERROR: Invalid Value %s, no such %s\n", display(s.cat.inherited(k, fr.key)), k.Name)
			return errFailed
		}
		e := &entry{kind: k, op: opCreate, key: fr.key, cmd: fr.cmd, at: time.Now()}
		if vf != nil && !vf.Key {
			e.put(vf, value, fr.cmd)
		}
		// A new object that needs more than its key (a route without a
		// next hop) gets its NOTE only if a later command leaves it so:
		// the commands of its context are what complete it.
		s.opening = true
		err := s.sync(e, vf)
		s.opening = false
		if err != nil {
			return err
		}
		s.pending = append(s.pending, e)
		return nil
	}
	if vf != nil && !vf.Key && !sameValue(obj[vf.Name], value) {
		return s.setField(fr, vf, value, fr.cmd)
	}
	return nil
}

func (s *Session) findEntry(k *model.Kind, key model.Object) *entry {
	ks := keyString(k, key)
	for _, e := range s.pending {
		if e.kind == k && e.op != opAction && keyString(k, e.key) == ks {
			return e
		}
	}
	return nil
}

func (s *Session) ensureCandidate() error {
	if s.cand != nil {
		return nil
	}
	ctx, cancel := s.rctx()
	defer cancel()
	c, err := s.api.NewCandidate(ctx, "swmgr cli")
	if err != nil {
		s.printf("ERROR: cannot start the pending config: %s\n", errText(err))
		return errFailed
	}
	s.cand = c
	return nil
}

// sync sends what the user typed on e to the candidate: a create once it
// is complete (all of it), else the settings not yet sent. f is the field
// just typed. A value the server refuses is an error (the caller drops
// it); a refusal that names another field (Nonce needs Passphrase) keeps
// the entry pending, not valid until that is fixed.
//
// A create carrying a value the server never stores (a User's Password)
// cannot be staged: it is checked with a dry run and sent directly by
// apply, after the commit.
func (s *Session) sync(e *entry, f *model.Field) error {
	if e.op == opCreate && (e.direct || e.hasTransient()) {
		e.direct = true
		if len(e.missing()) > 0 {
			return nil
		}
		ctx, cancel := s.rctx()
		defer cancel()
		_, err := s.api.Create(ctx, e.kind.Name, client.Object(e.object()), client.DryRun())
		return s.syncResult(e, f, err)
	}
	if e.op == opCreate && !e.staged {
		if len(e.missing()) > 0 {
			return nil
		}
		if err := s.ensureCandidate(); err != nil {
			return err
		}
		ctx, cancel := s.rctx()
		defer cancel()
		_, err := s.cand.Create(ctx, e.kind.Name, client.Object(e.object()))
		if err == nil {
			e.staged = true
		}
		return s.syncResult(e, f, err)
	}
	body := client.Object{}
	for n, kv := range e.key {
		body[n] = kv
	}
	n := 0
	for _, st := range e.sets {
		if !st.staged {
			body[st.field.Name] = st.value
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if err := s.ensureCandidate(); err != nil {
		return err
	}
	ctx, cancel := s.rctx()
	defer cancel()
	_, err := s.cand.UpdateByKey(ctx, e.kind.Name, body)
	return s.syncResult(e, f, err)
}

func (s *Session) syncResult(e *entry, f *model.Field, err error) error {
	if err == nil {
		e.problem = ""
		if !e.direct {
			for _, st := range e.sets {
				st.staged = true
			}
		}
		return nil
	}
	if errStatus(err) == 400 && f != nil && errField(err) != "" && !strings.EqualFold(errField(err), f.Name) {
		e.problem = errMessage(err)
		if !s.opening {
			s.printf("%s\n", s.yellow("NOTE: "+e.problem+": kept pending, not valid until that is fixed"))
		}
		return nil
	}
	s.printf("ERROR: %s\n", errText(err))
	return errFailed
}

// setField sets one attribute of the context's object, staging it in the
// candidate; a refused value is printed and queues nothing.
func (s *Session) setField(fr *frame, f *model.Field, v any, cmd string) error {
	k := fr.kind
	e := s.findEntry(k, fr.key)
	fresh := false
	if e == nil || e.op == opDelete {
		obj, found, err := s.getOne(s.view(), k, fr.key)
		if err != nil {
			s.printf("ERROR: %s\n", errText(err))
			return errFailed
		}
		if !found {
			s.printf("ERROR: %s %s is pending deletion or gone\n", k.Name, keyString(k, fr.key))
			return errFailed
		}
		if e == nil {
			e = &entry{kind: k, op: opUpdate, key: fr.key, cmd: fr.cmd, base: obj, at: time.Now()}
			fresh = true
		} else {
			e.op = opUpdate
		}
	}
	old, had := e.get(f.Name)
	e.put(f, v, cmd)
	if err := s.sync(e, f); err != nil {
		if had {
			e.put(f, old, cmd)
		} else {
			e.drop(f)
		}
		return err
	}
	if fresh {
		s.pending = append(s.pending, e)
	}
	return nil
}

// deleteObject queues `no <command> <key>`: a pending create is simply
// cancelled; an object that does not exist is FlexSwitch's error.
func (s *Session) deleteObject(k *model.Kind, key model.Object, cmd string) error {
	e := s.findEntry(k, key)
	if e != nil && e.op == opCreate && !e.staged {
		s.pending = slices.DeleteFunc(s.pending, func(x *entry) bool { return x == e })
		return nil
	}
	if !k.Creatable() {
		return s.resetObject(k, key, cmd)
	}
	if e == nil {
		if _, found, err := s.getOne(s.view(), k, key); err != nil {
			s.printf("ERROR: %s\n", errText(err))
			return errFailed
		} else if !found {
			s.printf("ERROR: Invalid Value for deletion\n")
			return errFailed
		}
	}
	if err := s.ensureCandidate(); err != nil {
		return err
	}
	ctx, cancel := s.rctx()
	defer cancel()
	if _, err := s.cand.DeleteByKey(ctx, k.Name, client.Object(key)); err != nil {
		if e != nil && e.op == opCreate && errStatus(err) == 409 {
			// The candidate no longer applies (another commit made this
			// create void): drop it and stage the rest on a new one.
			s.pending = slices.DeleteFunc(s.pending, func(x *entry) bool { return x == e })
			return s.restage()
		}
		s.printf("ERROR: %s\n", errText(err))
		return errFailed
	}
	if e != nil && e.op == opCreate {
		s.pending = slices.DeleteFunc(s.pending, func(x *entry) bool { return x == e })
		return nil
	}
	if e == nil {
		e = &entry{kind: k, key: key, cmd: cmd, at: time.Now()}
		s.pending = append(s.pending, e)
	}
	e.op, e.sets = opDelete, nil
	return nil
}

// resetObject is `no` on an object clients cannot delete (a port, the BGP
// speaker): FlexSwitch reset its attributes to their defaults.
func (s *Session) resetObject(k *model.Kind, key model.Object, cmd string) error {
	fr := &frame{kind: k, key: key, cmd: cmd}
	for _, f := range k.Fields {
		if f.Key || f.ReadOnly || f.Secret != model.Public {
			continue
		}
		if err := s.setField(fr, f, defaultOf(f), "no "+cmd); err != nil {
			return err
		}
	}
	return nil
}

func defaultOf(f *model.Field) any {
	if f.Default != nil {
		return f.Default
	}
	switch f.Type {
	case model.Int:
		return int64(0)
	case model.Bool:
		return false
	case model.StringList:
		return []string{}
	case model.RecordList:
		return []model.Object{}
	}
	return ""
}

// recordIdentity is the sub-field that names a record of a list in
// commands (`nexthop <NextHopIp>`): its first required one, else its
// first; nil when records have no sub-field.
func recordIdentity(f *model.Field) *model.Field {
	for _, sf := range f.Sub {
		if sf.Required {
			return sf
		}
	}
	if len(f.Sub) > 0 {
		return f.Sub[0]
	}
	return nil
}

// recordCommand is `<word> <identity> [<sub word> <value>]...`: it adds
// (or with `no` removes) one record of a list field; a record typed again
// with the same identity replaces the one there. Sub-fields not typed
// take their defaults.
func (s *Session) recordCommand(fr *frame, f *model.Field, args []token, neg bool) (any, error) {
	id := recordIdentity(f)
	word := f.CLIWord()
	if len(args) == 0 {
		s.printf("ERROR: Value expected for %s: %s\n", word, id.CLIWord())
		return nil, errFailed
	}
	idv, msg := checkValue(id, args[0].text)
	if msg != "" {
		s.printf("%s\n", msg)
		return nil, errFailed
	}
	cur := slices.Clone(s.currentRecords(fr, f))
	at := slices.IndexFunc(cur, func(r model.Object) bool { return display(r[id.Name]) == display(idv) })
	if neg {
		if at < 0 {
			s.printf("ERROR: Invalid Value %s, not in %s\n", args[0].text, word)
			return nil, errFailed
		}
		return slices.Delete(cur, at, at+1), nil
	}
	rec := model.Object{}
	for _, sf := range f.Sub {
		rec[sf.Name] = defaultOf(sf)
	}
	rec[id.Name] = idv
	rest := args[1:]
	for len(rest) > 0 {
		var words []string
		bySub := map[string]*model.Field{}
		for _, sf := range f.Sub {
			if sf == id {
				continue
			}
			for _, w := range []string{sf.CLIWord(), sf.Name} {
				if bySub[w] == nil {
					words = append(words, w)
					bySub[w] = sf
				}
			}
		}
		m := matchWord(rest[0].text, words)
		if len(m) == 0 || len(rest) < 2 || bySub[m[0]] != bySub[m[len(m)-1]] {
			s.printf("ERROR Invalid command entered: %s (after %s <%s>: %s)\n", rest[0].text, word, id.CLIWord(), strings.Join(dedupe(words), " "))
			return nil, errFailed
		}
		sf := bySub[m[0]]
		v, msg := checkValue(sf, rest[1].text)
		if msg != "" {
			s.printf("%s\n", msg)
			return nil, errFailed
		}
		rec[sf.Name] = v
		rest = rest[2:]
	}
	if at >= 0 {
		cur[at] = rec
	} else {
		cur = append(cur, rec)
	}
	return cur, nil
}

// currentRecords is a record-list attribute as the session sees it.
func (s *Session) currentRecords(fr *frame, f *model.Field) []model.Object {
	l, _ := s.currentValue(fr, f).([]model.Object)
	return l
}

// leafCommand sets (or with `no` reverts) one attribute in a context.
func (s *Session) leafCommand(fr *frame, f *model.Field, args []token, neg bool, line string) error {
	word := f.CLIWord()
	cmd := strings.TrimSpace(line)
	// A port written FlexSwitch's way: `DstIntfRef fpPort 2`.
	if f.PortNames() && len(args) == 2 {
		if _, err := strconv.Atoi(strings.SplitN(args[1].text, "s", 2)[0]); err == nil && strings.EqualFold(args[0].text, "fpPort") {
			args = []token{{text: "fpPort" + args[1].text, pos: args[0].pos}}
		}
	}
	var v any
	switch {
	case f.Type == model.RecordList:
		rv, err := s.recordCommand(fr, f, args, neg)
		if err != nil {
			return err
		}
		v = rv
	case f.Type == model.StringList:
		if len(args) != 1 {
			s.printf("ERROR: Value expected for %s\n", word)
			return errFailed
		}
		cur := s.currentList(fr, f)
		elem := args[0].text
		if neg {
			if !slices.Contains(cur, elem) {
				s.printf("ERROR: Invalid Value %s, not in %s\n", elem, word)
				return errFailed
			}
			cur = slices.DeleteFunc(slices.Clone(cur), func(x string) bool { return x == elem })
		} else if !slices.Contains(cur, elem) {
			cur = append(slices.Clone(cur), elem)
		}
		v = cur
	case f.IsCLISwitch():
		on, off := f.CLISwitchValues()
		v = on
		if neg {
			v = off
		}
		if len(args) == 1 && !neg {
			pv, msg := checkValue(f, args[0].text)
			if msg != "" {
				s.printf("%s\n", msg)
				return errFailed
			}
			v = pv
		} else if len(args) > 0 {
			return s.badToken(line, args, 0, nil)
		}
	case neg:
		if len(args) > 0 {
			s.printf("ERROR Delete commands do not expect value, will revert to default if exists\n")
			return errFailed
		}
		v = defaultOf(f)
	default:
		if len(args) == 0 {
			s.printf("ERROR: Value expected for %s\n", word)
			return errFailed
		}
		if len(args) > 1 {
			given := joinTokens(args)
			if f.Secret != model.Public {
				given = "********"
			}
			s.printf("ERROR: %s takes one value; quote a value with blanks: %s \"%s\"\n", word, word, given)
			return errFailed
		}
		if f.Secret != model.Public && args[0].text == NotShown {
			s.printf("ERROR: %s: show run never shows a secret, so this replay cannot set it: type the value instead of %s (or delete the line if none was set)\n", word, NotShown)
			return errFailed
		}
		pv, msg := checkValue(f, args[0].text)
		if msg != "" {
			s.printf("%s\n", msg)
			return errFailed
		}
		v = pv
	}
	if fr.entry != nil {
		if neg && f.Type != model.StringList && f.Type != model.RecordList {
			fr.entry.drop(f)
			return nil
		}
		fr.entry.put(f, v, cmd)
		return nil
	}
	return s.setField(fr, f, v, cmd)
}

func joinTokens(t []token) string {
	var parts []string
	for _, x := range t {
		parts = append(parts, x.text)
	}
	return strings.Join(parts, " ")
}

// currentList is a list attribute as the session sees it.
func (s *Session) currentList(fr *frame, f *model.Field) []string {
	l, _ := s.currentValue(fr, f).([]string)
	return l
}

// currentValue is an attribute as the session sees it: in the action
// context's entry, else in the object's pending entry, else stored (nil
// for an object this session creates and has not given the attribute).
func (s *Session) currentValue(fr *frame, f *model.Field) any {
	if fr.entry != nil {
		v, _ := fr.entry.get(f.Name)
		return v
	}
	if e := s.findEntry(fr.kind, fr.key); e != nil {
		if v, ok := e.get(f.Name); ok {
			return v
		}
		if e.op == opCreate {
			return nil
		}
	}
	obj, found, err := s.getOne(s.view(), fr.kind, fr.key)
	if err != nil || !found {
		return nil
	}
	return obj[f.Name]
}

// actionCommand queues an action: a one-liner (`user alice password P`,
// `reset config default`) or a context for its arguments (`reset config
// toFile`).
func (s *Session) actionCommand(k *model.Kind, vf *model.Field, value any, raw string, args []token, neg bool, cmd string) error {
	if neg {
		before := len(s.pending)
		s.pending = slices.DeleteFunc(s.pending, func(e *entry) bool { return e.kind == k })
		if before == len(s.pending) {
			s.printf("ERROR: Invalid Value for deletion\n")
			return errFailed
		}
		return nil
	}
	e := &entry{kind: k, op: opAction, key: model.Object{}, cmd: cmd, at: time.Now()}
	if vf != nil {
		e.put(vf, value, cmd)
	}
	c := k.CLI
	openCtx := !c.Line
	extra := ""
	if c.Context != "" && len(args) > 0 && len(matchWord(args[0].text, []string{c.Context})) == 1 {
		openCtx, extra = true, c.Context
		args = args[1:]
		e.cmd = strings.TrimSpace(cmd + " " + c.Context)
	}
	// Word/value pairs on the same line.
	for len(args) > 0 {
		var fields []string
		byWord := map[string]*model.Field{}
		for _, f := range k.Fields {
			if f == vf {
				continue
			}
			fields = append(fields, f.CLIWord())
			byWord[f.CLIWord()] = f
			if f.CLIWord() != f.Name {
				fields = append(fields, f.Name)
				byWord[f.Name] = f
			}
		}
		m := matchWord(args[0].text, fields)
		if len(m) == 0 || len(args) < 2 {
			s.printf("ERROR Invalid command entered: %s\n", args[0].text)
			return errFailed
		}
		f := byWord[m[0]]
		v, msg := checkValue(f, args[1].text)
		if msg != "" {
			s.printf("%s\n", msg)
			return errFailed
		}
		e.put(f, v, f.CLIWord()+" "+args[1].text)
		args = args[2:]
		openCtx = false
	}
	s.pending = append(s.pending, e)
	if openCtx {
		s.stack = append(s.stack, &frame{kind: k, key: model.Object{}, cmd: e.cmd, prompt: s.promptFor(k, raw, extra), entry: e, depth: len(s.stack) + 1})
	}
	return nil
}

// doExec is `do <exec command>` in config mode: the command runs as at
// `#`, and the session stays in its context.
func (s *Session) doExec(args []token, line string) error {
	if len(args) == 0 {
		s.printf("%% Incomplete command: do <exec command>\n")
		return errFailed
	}
	mode := s.mode
	s.mode = EnableMode
	defer func() { s.mode = mode }()
	if m, _, _, _ := resolve(args, s.execOptions()); m != nil {
		switch m[0].control {
		case "enable", "config", "exit", "quit", "shell", "reload":
			s.printf("ERROR: do %s: not from config mode\n", m[0].words[0])
			return errFailed
		}
	}
	return s.execExec(args, line)
}

// restage discards the candidate and stages every pending object entry
// again on a new one, on the running configuration as it is now.
func (s *Session) restage() error {
	if s.cand != nil {
		ctx, cancel := s.rctx()
		s.cand.Discard(ctx)
		cancel()
		s.cand = nil
	}
	for _, e := range s.pending {
		if e.op == opAction || e.direct {
			continue
		}
		if e.op == opDelete {
			if err := s.ensureCandidate(); err != nil {
				return err
			}
			ctx, cancel := s.rctx()
			_, err := s.cand.DeleteByKey(ctx, e.kind.Name, client.Object(e.key))
			cancel()
			if err != nil {
				s.printf("ERROR: %s: %s\n", e.cmd, errText(err))
				return errFailed
			}
			continue
		}
		e.staged = false
		for _, st := range e.sets {
			st.staged = false
		}
		if err := s.sync(e, nil); err != nil {
			return err
		}
	}
	return nil
}
