// Package openapi generates swmgr's OpenAPI 3.1 document from the model
// registry: a schema per kind (read, state, create and update forms, with
// types, enums, ranges, lengths, defaults, keys, references and secrets), a
// path per kind and route form, the actions, the error body and its codes,
// paging, candidates, revisions and the change feed.
//
// Nothing here names a kind: every kind-specific part comes from
// model.Registry. A kind, field or action declared in the model appears in
// the document without a change here.
package openapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
)

// Path is where the server serves the document.
const Path = "/public/v1/openapi.json"

const prefix = "/public/v1"

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// Version is the document's info.version: the version of the interface
// (the v1 of /public/v1 and its revisions), not of the binary, so that the
// committed copy in docs/ does not change with every build.
const Version = "1.0"

// JSON renders the document, indented, ending with a newline.
func JSON(reg *model.Registry) []byte {
	b, err := json.MarshalIndent(Document(reg), "", "  ")
	if err != nil {
		panic(err) // only plain values above
	}
	return append(b, '\n')
}

// Document builds the document as plain maps and slices.
func Document(reg *model.Registry) map[string]any {
	g := &gen{reg: reg, schemas: obj{}, paths: obj{}}
	g.common()
	for _, k := range reg.Kinds() {
		switch k.Class {
		case model.Config:
			g.configKind(k, "")
			g.configKind(k, "/candidates/{CandidateId}")
			g.stateOfConfig(k)
		case model.State:
			g.stateKind(k)
		case model.Action:
			g.action(k)
		}
	}
	g.transactions()
	g.service()
	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "swmgr REST API",
			"version": Version,
			"description": "The REST interface of swmgr, wire-compatible with SnapRoute FlexSwitch's /public/v1 paths, plus swmgr's own " +
				"candidates, revisions and change feed. Generated from the object model; see docs/api.md for the contract. " +
				"Kind names in paths are case-insensitive (this document spells them as declared), and a trailing s lists a kind. " +
				"Plain HTTP on a loopback address needs no credentials; every other listener needs HTTP Basic credentials of a User. " +
				"Each operation names the least role that may call it (x-swmgr-role: read-only, operator or admin, from the User's Group) and, " +
				"for an action any user may run on its own account, the field that must be its name (x-swmgr-self); both derive from the model's declarations.",
			"license": obj{"name": "Apache-2.0", "identifier": "Apache-2.0"},
		},
		"paths":    g.paths,
		"security": []any{obj{"basic": []any{}}, obj{}},
		"components": obj{
			"schemas":         g.schemas,
			"securitySchemes": obj{"basic": obj{"type": "http", "scheme": "basic"}},
			"parameters":      g.parameters(),
			"responses": obj{
				"Error": obj{"description": "The request failed; Error.Code says why (stable, machine-readable).", "content": jsonContent(ref("ErrorBody"))},
			},
		},
		"tags": g.tags(),
	}
}

type gen struct {
	reg     *model.Registry
	schemas obj
	paths   obj
	kind    *model.Kind // whose operations op is adding, if any
}

func jsonContent(schema obj) obj { return obj{"application/json": obj{"schema": schema}} }

func reply(desc string, schema obj, headers ...string) obj {
	r := obj{"description": desc, "content": jsonContent(schema)}
	if len(headers) > 0 {
		h := obj{}
		for _, name := range headers {
			h[name] = obj{"schema": obj{"type": "string"}, "description": headerDoc[name]}
		}
		r["headers"] = h
	}
	return r
}

var headerDoc = map[string]string{
	"ETag":     "the revision that last changed the object (or the new running revision), quoted: \"42\"",
	"Location": "the path of the created object",
}

// op adds an operation. Who may call it comes from the declarations: o's
// "access" (a model.Access) if set, else the kind being described
// (g.kind), else, for a read, any user; an operation with an empty
// security requirement needs no user at all.
func (g *gen) op(path, method string, o obj) {
	a, ok := o["access"].(model.Access)
	delete(o, "access")
	switch {
	case ok:
	case g.kind != nil:
		a = g.kind.AccessFor(method)
		if g.kind.Class == model.State {
			a = model.Reading
		}
	case method == "GET":
		a = model.Reading
	default:
		panic(fmt.Sprintf("openapi: %s %s declares no access", method, path))
	}
	if sec, _ := o["security"].([]any); len(sec) != 1 || len(sec[0].(obj)) != 0 {
		withAccess(o, a)
	}
	p, _ := g.paths[path].(obj)
	if p == nil {
		p = obj{}
		g.paths[path] = p
	}
	resp := o["responses"].(obj)
	resp["default"] = obj{"$ref": "#/components/responses/Error"}
	p[strings.ToLower(method)] = o
}

// withAccess says in o who may call it: x-swmgr-role (the least role:
// read-only, operator or admin), x-swmgr-self (the field that lets any user
// call it for itself), and a sentence of its description.
func withAccess(o obj, a model.Access) {
	o["x-swmgr-role"] = a.Role.String()
	if a.Self != "" && a.Role > model.RoleReader {
		o["x-swmgr-self"] = a.Self
	}
	who := "Who may call it: " + a.Who() + "."
	if d, _ := o["description"].(string); d != "" {
		who = d + "\n\n" + who
	}
	o["description"] = who
}

// operator is what the candidate and revision operations that are not
// writes of a kind need.
var operator = model.Access{Role: model.RoleOperator}

func (g *gen) parameters() obj {
	return obj{
		"ObjectId":      obj{"name": "ObjectId", "in": "path", "required": true, "description": "the object's ObjectId", "schema": obj{"type": "string", "format": "uuid"}},
		"CandidateId":   obj{"name": "CandidateId", "in": "path", "required": true, "description": "the candidate's id", "schema": obj{"type": "string"}},
		"Revision":      obj{"name": "Revision", "in": "path", "required": true, "schema": obj{"type": "integer", "minimum": 1}},
		"To":            obj{"name": "To", "in": "path", "required": true, "description": "the revision to compare with", "schema": obj{"type": "integer", "minimum": 1}},
		"CurrentMarker": obj{"name": "CurrentMarker", "in": "query", "description": "where the page starts: 0, then the previous page's NextMarker", "schema": obj{"type": "integer", "minimum": 0, "default": 0}},
		"Count":         obj{"name": "Count", "in": "query", "description": "objects per page", "schema": obj{"type": "integer", "minimum": 1, "maximum": 1024, "default": 1024}},
		"NextMarker":    obj{"name": "NextMarker", "in": "query", "description": "ignored (the FlexSwitch SDK sends it)", "schema": obj{"type": "integer"}},
		"dry_run":       obj{"name": "dry_run", "in": "query", "description": "validate and report what would change, changing nothing", "schema": obj{"type": "boolean", "default": false}},
		"If-Match":      obj{"name": "If-Match", "in": "header", "description": "fail with 412 unless the object's ETag (on a commit: the running revision) is this one; \"42\" or 42", "schema": obj{"type": "string"}},
	}
}

func param(name string) obj { return obj{"$ref": "#/components/parameters/" + name} }

func pagingParams() []any {
	return []any{param("CurrentMarker"), param("Count"), param("NextMarker")}
}

// common adds the schemas every path shares.
func (g *gen) common() {
	codes := apierr.Codes()
	sort.Strings(codes)
	g.schemas["ErrorBody"] = obj{
		"type":        "object",
		"description": "Every error response. Result repeats the message after \"Error: \" as FlexSwitch did; Error carries the details.",
		"required":    []any{"Result", "Error"},
		"properties": obj{
			"Result": obj{"type": "string", "pattern": "^Error: "},
			"Error": obj{
				"type":     "object",
				"required": []any{"Status", "Code", "Message"},
				"properties": obj{
					"Status":  obj{"type": "integer", "minimum": 400, "maximum": 599, "description": "the HTTP status"},
					"Code":    obj{"type": "string", "enum": toAny(codes), "description": "stable, machine-readable; never renamed"},
					"Message": obj{"type": "string", "description": "what was wrong and what would be right"},
					"Object":  obj{"type": "string", "description": "the kind involved"},
					"Field":   obj{"type": "string", "description": "the field involved"},
				},
				"additionalProperties": false,
			},
			"ObjectId": obj{"type": "string", "description": "on a duplicate: the existing object"},
		},
		"additionalProperties": false,
	}
	cors := obj{
		"Access-Control-Allow-Headers": obj{"type": "string"},
		"Access-Control-Allow-Methods": obj{"type": "string"},
		"Access-Control-Allow-Origin":  obj{"type": "string"},
		"Access-Control-Max_age":       obj{"type": "string"},
	}
	props := obj{"ObjectId": obj{"type": "string", "format": "uuid"}, "Result": obj{"type": "string", "const": "Success"}}
	for k, v := range cors {
		props[k] = v
	}
	g.schemas["WriteSuccess"] = obj{
		"type": "object", "description": "A create, update or delete succeeded. The CORS entries are in the body too, as FlexSwitch sent them.",
		"required": []any{"ObjectId", "Result"}, "properties": props, "additionalProperties": false,
	}
	g.schemas["Change"] = obj{
		"type": "object", "description": "One object's change. Before and After hold every field, each set secret as \"******\".",
		"required": []any{"Kind", "Key", "ObjectId", "Op"},
		"properties": obj{
			"Kind": obj{"type": "string"}, "Key": obj{"type": "string", "description": "key fields, like IntfRef=fpPort1"},
			"ObjectId": obj{"type": "string"}, "Op": obj{"type": "string", "enum": []any{"create", "update", "delete"}},
			"Before": obj{"type": "object"}, "After": obj{"type": "object"},
		},
		"additionalProperties": false,
	}
	changes := obj{"type": "array", "items": ref("Change")}
	g.schemas["DryRunResult"] = obj{
		"type": "object", "description": "What a write would change (?dry_run=true); nothing changed.",
		"required":             []any{"Result", "DryRun", "Changes"},
		"properties":           obj{"Result": obj{"type": "string", "const": "Success"}, "DryRun": obj{"type": "boolean", "const": true}, "Changes": changes},
		"additionalProperties": false,
	}
	g.schemas["CommitResult"] = obj{
		"type": "object", "description": "A commit, a candidate commit or a rollback. Revision is absent (or 0) when nothing changed; Message then says so.",
		"required": []any{"Result", "Changes"},
		"properties": obj{
			"Result": obj{"type": "string", "const": "Success"}, "Revision": obj{"type": "integer", "minimum": 0}, "Changes": changes,
			"DryRun": obj{"type": "boolean"}, "ConfirmBy": obj{"type": "string", "format": "date-time", "description": "rolled back at this time unless confirmed"},
			"Message": obj{"type": "string"},
		},
		"additionalProperties": false,
	}
	g.schemas["LifecycleResult"] = obj{
		"type": "object", "description": "SaveConfig, ResetConfig and ResetConfigToFile (docs/configfile.md): where the file went or came from, the revision saved or made, how many changes (a count; with ?dry_run=true the diffs, at most 10,000, then Truncated).",
		"required": []any{"Result"},
		"properties": obj{
			"Result": obj{"type": "string", "const": "Success"}, "Revision": obj{"type": "integer", "minimum": 0},
			"Changes": obj{"anyOf": []any{obj{"type": "integer", "minimum": 0}, changes}}, "Truncated": obj{"type": "integer"},
			"DryRun": obj{"type": "boolean"}, "File": obj{"type": "string"}, "Objects": obj{"type": "integer"},
			"Encrypted": obj{"type": "boolean"}, "Format": obj{"type": "integer"}, "SavedRevision": obj{"type": "integer"},
		},
		"additionalProperties": false,
	}
	g.schemas["CancelResult"] = obj{
		"type": "object", "required": []any{"Result", "Revision", "RollbackRevision"}, "additionalProperties": false,
		"properties": obj{
			"Result": obj{"type": "string", "const": "Success"}, "Revision": obj{"type": "integer", "description": "the revision cancelled"},
			"RollbackRevision": obj{"type": "integer", "description": "the revision that rolled it back"},
		},
	}
	g.schemas["Success"] = obj{"type": "object", "required": []any{"Result"}, "properties": obj{"Result": obj{"type": "string", "const": "Success"}, "Revision": obj{"type": "integer"}}, "additionalProperties": false}
	g.schemas["Revision"] = obj{
		"type": "object", "description": "One commit of the configuration.",
		"required": []any{"Revision", "Time", "Source", "Changes"},
		"properties": obj{
			"Revision": obj{"type": "integer", "minimum": 1}, "Time": obj{"type": "string", "format": "date-time"},
			"User": obj{"type": "string"}, "Source": obj{"type": "string", "description": "rest, cli, ansible, web, rollback, confirm-timeout, system, reset, restore, startup"},
			"Comment": obj{"type": "string"}, "Changes": changes,
		},
		"additionalProperties": false,
	}
	g.schemas["PendingConfirmation"] = obj{
		"type": "object", "description": "The commit awaiting confirmation, if any (Awaiting false and nothing else when none).",
		"required": []any{"Awaiting"},
		"properties": obj{
			"Awaiting": obj{"type": "boolean"}, "Revision": obj{"type": "integer", "minimum": 1},
			"User": obj{"type": "string"}, "Comment": obj{"type": "string"},
			"ConfirmBy":   obj{"type": "string", "format": "date-time", "description": "when it is rolled back unless confirmed"},
			"SecondsLeft": obj{"type": "integer", "minimum": 0, "description": "0 once the deadline passed and the rollback is being retried"},
		},
		"additionalProperties": false,
	}
	g.schemas["RevisionPage"] = page("Revision", obj{"type": "string", "description": "the revision number"})
	g.schemas["CandidateInfo"] = obj{
		"type": "object", "required": []any{"CandidateId", "BaseRevision", "Created", "LastUsed", "Edits"},
		"properties": obj{
			"CandidateId": obj{"type": "string"}, "BaseRevision": obj{"type": "integer", "minimum": 0}, "Comment": obj{"type": "string"},
			"User": obj{"type": "string"}, "Created": obj{"type": "string", "format": "date-time"}, "LastUsed": obj{"type": "string", "format": "date-time"},
			"Edits": obj{"type": "integer", "minimum": 0},
		},
		"additionalProperties": false,
	}
	g.schemas["CandidateList"] = obj{"type": "object", "required": []any{"Candidates"}, "properties": obj{"Candidates": obj{"type": "array", "items": ref("CandidateInfo")}}, "additionalProperties": false}
	g.schemas["CandidateCreated"] = obj{
		"type": "object", "required": []any{"Result", "CandidateId", "BaseRevision"},
		"properties":           obj{"Result": obj{"type": "string", "const": "Success"}, "CandidateId": obj{"type": "string"}, "BaseRevision": obj{"type": "integer"}},
		"additionalProperties": false,
	}
	g.schemas["CandidateDiff"] = obj{"type": "object", "required": []any{"CandidateId", "Changes"}, "properties": obj{"CandidateId": obj{"type": "string"}, "Changes": changes}, "additionalProperties": false}
	g.schemas["RevisionDiff"] = obj{"type": "object", "required": []any{"From", "To", "Changes"}, "properties": obj{"From": obj{"type": "integer"}, "To": obj{"type": "integer"}, "Changes": changes}, "additionalProperties": false}
	g.schemas["NewCandidate"] = obj{"type": "object", "properties": obj{"Comment": obj{"type": "string"}}, "additionalProperties": false}
	g.schemas["StageEdits"] = obj{
		"type": "object", "required": []any{"Edits"},
		"properties": obj{"Edits": obj{"type": "array", "minItems": 1, "items": obj{
			"type": "object", "required": []any{"Method", "Path"},
			"properties": obj{
				"Method":  obj{"enum": []any{"POST", "PATCH", "PUT", "DELETE"}, "description": "PUT replaces: config/<Object> makes that object exactly the body (fields left out return to their defaults; created if missing), config/<Object>s makes the kind's objects exactly the list (others deleted, or returned to their defaults where clients cannot delete them); the server computes the edits on the candidate"},
				"Path":    obj{"type": "string", "description": "config/<Object>[/<ObjectId>][?<key>=<value>...]: the path the edit would have under the candidate"},
				"Body":    obj{"type": []any{"object", "array"}, "description": "the body the edit would have; for a PUT of config/<Object>s, the array of objects"},
				"IfMatch": obj{"type": "string", "description": "the If-Match header the edit would have"},
			},
			"additionalProperties": false,
		}}},
		"additionalProperties": false,
	}
	g.schemas["StagedEdits"] = obj{
		"type": "object", "required": []any{"Result", "CandidateId", "Staged", "ObjectIds"},
		"properties": obj{
			"Result": obj{"const": "Success"}, "CandidateId": obj{"type": "string"}, "Staged": obj{"type": "integer"},
			"ObjectIds": obj{"type": "array", "items": obj{"type": "string"}, "description": "per edit, the ObjectId of the object it creates or changes (\"\" for a PUT of a collection)"},
		},
		"additionalProperties": false,
	}
	g.schemas["CommitOptions"] = obj{
		"type": "object",
		"properties": obj{
			"Comment": obj{"type": "string"},
			"Confirm": obj{"type": "integer", "minimum": 0, "maximum": 86400, "description": "seconds until the commit is rolled back unless confirmed; 0: no confirmation"},
			"Force":   obj{"type": "boolean", "description": "commit even if objects it changes were changed by others since the candidate was made"},
		},
		"additionalProperties": false,
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// page is the list form: paging fields and {Object, ObjectId} entries.
func page(schema string, id obj) obj {
	return obj{
		"type":        "object",
		"description": "One page. Ask for the next with CurrentMarker=NextMarker while MoreExist.",
		"required":    []any{"CurrentMarker", "NextMarker", "MoreExist", "ObjCount", "Objects"},
		"properties": obj{
			"CurrentMarker": obj{"type": "integer", "minimum": 0},
			"NextMarker":    obj{"type": "integer", "minimum": 0},
			"MoreExist":     obj{"type": "boolean"},
			"ObjCount":      obj{"type": "integer", "minimum": 0},
			"Objects": obj{"type": "array", "items": obj{
				"type": "object", "required": []any{"Object"},
				"properties":           obj{"Object": ref(schema), "ObjectId": id},
				"additionalProperties": false,
			}},
		},
		"additionalProperties": false,
	}
}

func oneReply(schema string) obj {
	return obj{
		"type": "object", "required": []any{"Object", "ObjectId"},
		"properties":           obj{"Object": ref(schema), "ObjectId": obj{"type": "string", "format": "uuid"}},
		"additionalProperties": false,
	}
}

// form says which fields a schema has and how they read.
type form int

const (
	readForm   form = iota // a config object as read back
	stateForm              // the state form: read form plus operational fields
	createForm             // a create body
	updateForm             // an update body (keys name the object)
	keyForm                // a by-key body of a delete
	actionForm             // an action body
)

func (g *gen) schema(k *model.Kind, f form, doc string) obj {
	props := obj{}
	var required []any
	fields := k.Fields
	if f == stateForm {
		fields = append(append([]*model.Field(nil), k.Fields...), k.StateOnly...)
	}
	for _, fd := range fields {
		if f == keyForm && !fd.Key {
			continue
		}
		props[fd.Name] = property(fd, f)
		switch f {
		case readForm, stateForm:
			required = append(required, fd.Name)
		case createForm, actionForm:
			if fd.Required || fd.Key && fd.Default == nil {
				required = append(required, fd.Name)
			}
		}
		if f != readForm && f != stateForm {
			for _, a := range fd.Aliases {
				p := property(fd, f)
				p["deprecated"] = true
				p["description"] = "another spelling of " + fd.Name
				props[a] = p
			}
		}
	}
	s := obj{"type": "object", "description": doc, "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// jsonType is the JSON Schema type of a scalar field.
func jsonType(t model.Type) string {
	switch t {
	case model.Int:
		return "integer"
	case model.Bool:
		return "boolean"
	}
	return "string"
}

// record is the schema of a nested JSON object (FlexSwitch's structured
// fields, such as BGPv4NeighborState.Messages) with its declared fields.
func record(sub []*model.Field, f form) obj {
	props := obj{}
	for _, fd := range sub {
		props[fd.Name] = property(fd, f)
	}
	return obj{"type": "object", "properties": props}
}

func property(fd *model.Field, f form) obj {
	var p obj
	switch fd.Type {
	case model.String:
		p = obj{"type": "string"}
	case model.Int:
		p = obj{"type": "integer"}
	case model.Bool:
		p = obj{"type": "boolean"}
	case model.StringList:
		p = obj{"type": "array", "items": obj{"type": "string"}}
	case model.Record:
		p = record(fd.Sub, f)
	case model.RecordList:
		p = obj{"type": "array", "items": record(fd.Sub, f)}
	case model.Document:
		p = obj{"type": "object", "additionalProperties": obj{"type": "array", "items": obj{"type": "object"}}}
	default:
		p = obj{}
	}
	var notes []string
	if fd.Doc != "" {
		notes = append(notes, fd.Doc)
	}
	target := p
	if fd.Type == model.StringList {
		target = p["items"].(obj)
	}
	if len(fd.Enum) > 0 {
		values := toAny(fd.Enum)
		if (f == readForm || f == stateForm) && fd.Default == nil && !fd.Key && !fd.Required {
			values = append(values, "") // not set
		}
		target["enum"] = values
	}
	if fd.Range != nil {
		p["minimum"], p["maximum"] = fd.Range.Min, fd.Range.Max
	}
	if fd.MaxLen > 0 {
		target["maxLength"] = fd.MaxLen
	}
	if fd.Format != nil {
		target["x-swmgr-format"] = fd.Format.Name
		notes = append(notes, "form: "+fd.Format.Doc)
	}
	if fd.InEffect && f == stateForm {
		notes = append(notes, "the value in effect, which may differ from the configured one")
	}
	if fd.PortList() && f != readForm && f != stateForm {
		notes = append(notes, model.PortListNote)
	}
	if fd.Default != nil {
		p["default"] = fd.Default
	}
	if fd.Key {
		p["x-swmgr-key"] = true
		notes = append(notes, "key")
	}
	if fd.Ref != "" {
		p["x-swmgr-ref"] = fd.Ref
		notes = append(notes, "names a "+fd.Ref)
	}
	if fd.ReadOnly {
		p["readOnly"] = true
		notes = append(notes, "set by the switch")
	}
	if fd.CreateOnly {
		p["x-swmgr-create-only"] = true
		notes = append(notes, "given at create only")
	}
	switch fd.Secret {
	case model.Sealed:
		p["writeOnly"] = true
		p["x-swmgr-secret"] = "sealed"
		notes = append(notes, "secret: write-only, stored encrypted, read back as \"\"")
	case model.Transient:
		p["writeOnly"] = true
		p["x-swmgr-secret"] = "transient"
		notes = append(notes, "secret: write-only, never stored by swmgr, read back as \"\"")
	}
	if (f == readForm || f == stateForm) && fd.Secret != model.Public {
		p["enum"] = []any{""} // never returned
	}
	if len(notes) > 0 {
		p["description"] = strings.Join(notes, "; ")
	}
	return p
}

func (g *gen) configKind(k *model.Kind, scope string) {
	g.kind = k
	defer func() { g.kind = nil }()
	tag := k.Name
	base := prefix + scope + "/config/" + k.Name
	inCandidate := scope != ""
	if !inCandidate {
		g.schemas[k.Name] = g.schema(k, readForm, k.Doc)
		g.schemas[k.Name+"Update"] = g.schema(k, updateForm, "Fields to change; the key fields name the object (not needed by ObjectId).")
		if k.Creatable() {
			g.schemas[k.Name+"Create"] = g.schema(k, createForm, "A new "+k.Name+"; fields not given take their defaults.")
			g.schemas[k.Name+"Key"] = g.schema(k, keyForm, "The key fields of a "+k.Name+".")
		}
		g.schemas[k.Name+"Reply"] = oneReply(k.Name)
		g.schemas[k.Name+"Page"] = page(k.Name, obj{"type": "string", "format": "uuid"})
	}
	where := ""
	var scopeParams []any
	if inCandidate {
		where = " in a candidate (staged until its commit)"
		scopeParams = []any{param("CandidateId")}
		tag = "Candidates"
	}
	keyParams := append([]any(nil), scopeParams...)
	for _, f := range k.Keys() {
		keyParams = append(keyParams, obj{"name": f.Name, "in": "query", "description": "key field (or give it in the body)", "schema": obj{"type": "string"}})
	}
	written := reply("done", obj{"anyOf": []any{ref("WriteSuccess"), ref("DryRunResult")}}, "ETag")
	writeParams := func(ps []any) []any {
		if inCandidate {
			return ps
		}
		return append(append([]any(nil), ps...), param("dry_run"), param("If-Match"))
	}
	opID := func(verb, what string) string {
		if inCandidate {
			return "candidate" + verb + k.Name + what
		}
		return strings.ToLower(verb[:1]) + verb[1:] + k.Name + what
	}
	g.op(base, "GET", obj{
		"operationId": opID("Get", ""), "tags": []any{tag}, "summary": "Read a " + k.Name + " by its key fields" + where,
		"parameters": keyParams,
		"responses":  obj{"200": reply("the object", ref(k.Name+"Reply"), "ETag")},
	})
	g.op(base, "PATCH", obj{
		"operationId": opID("Update", ""), "tags": []any{tag}, "summary": "Update a " + k.Name + " named by its key fields" + where,
		"parameters":  writeParams(keyParams),
		"requestBody": obj{"required": true, "content": jsonContent(ref(k.Name + "Update"))},
		"responses":   obj{"200": written},
	})
	if k.Creatable() {
		created := reply("created", ref("WriteSuccess"), "ETag", "Location")
		g.op(base, "POST", obj{
			"operationId": opID("Create", ""), "tags": []any{tag}, "summary": "Create a " + k.Name + where,
			"parameters":  writeParams(scopeParams),
			"requestBody": obj{"required": true, "content": jsonContent(ref(k.Name + "Create"))},
			"responses":   obj{"201": created, "200": reply("a dry run: what would change", ref("DryRunResult"))},
		})
		g.op(base, "DELETE", obj{
			"operationId": opID("Delete", ""), "tags": []any{tag}, "summary": "Delete a " + k.Name + " named by its key fields" + where,
			"parameters":  writeParams(keyParams),
			"requestBody": obj{"content": jsonContent(ref(k.Name + "Key"))},
			"responses":   obj{"200": reply("deleted", obj{"anyOf": []any{ref("WriteSuccess"), ref("DryRunResult")}})},
		})
	}
	g.op(base+"s", "GET", obj{
		"operationId": opID("List", "s"), "tags": []any{tag}, "summary": "List every " + k.Name + where,
		"parameters": append(append([]any(nil), scopeParams...), pagingParams()...),
		"responses":  obj{"200": reply("one page", ref(k.Name+"Page"))},
	})
	idParams := append(append([]any(nil), scopeParams...), param("ObjectId"))
	g.op(base+"/{ObjectId}", "GET", obj{
		"operationId": opID("Get", "ById"), "tags": []any{tag}, "summary": "Read a " + k.Name + " by ObjectId" + where,
		"parameters": idParams,
		"responses":  obj{"200": reply("the object", ref(k.Name+"Reply"), "ETag")},
	})
	g.op(base+"/{ObjectId}", "PATCH", obj{
		"operationId": opID("Update", "ById"), "tags": []any{tag}, "summary": "Update a " + k.Name + " by ObjectId" + where,
		"parameters":  writeParams(idParams),
		"requestBody": obj{"required": true, "content": jsonContent(ref(k.Name + "Update"))},
		"responses":   obj{"200": written},
	})
	if k.Creatable() {
		g.op(base+"/{ObjectId}", "DELETE", obj{
			"operationId": opID("Delete", "ById"), "tags": []any{tag}, "summary": "Delete a " + k.Name + " by ObjectId" + where,
			"parameters": writeParams(idParams),
			"responses":  obj{"200": reply("deleted", obj{"anyOf": []any{ref("WriteSuccess"), ref("DryRunResult")}})},
		})
	}
}

func (g *gen) stateOfConfig(k *model.Kind) {
	name := k.StateName()
	doc := k.StateDoc
	if doc == "" {
		doc = "The state form of " + k.Name + ": its fields as the switch runs them."
	}
	g.schemas[name] = g.schema(k, stateForm, doc)
	g.stateRoutes(k, name, true)
}

func (g *gen) stateKind(k *model.Kind) {
	g.schemas[k.Name] = g.schema(k, readForm, k.Doc)
	g.stateRoutes(k, k.Name, false)
}

func (g *gen) stateRoutes(k *model.Kind, schema string, byID bool) {
	g.kind = k
	defer func() { g.kind = nil }()
	pathName := strings.TrimSuffix(k.StateName(), "State")
	base := prefix + "/state/" + pathName
	g.schemas[schema+"Reply"] = oneReply(schema)
	var id obj = obj{"type": "string", "format": "uuid"}
	if !byID {
		id = obj{"type": "string", "description": "entries of a state-only kind have no ObjectId: always \"\""}
		g.schemas[schema+"Reply"] = obj{"type": "object", "required": []any{"Object", "ObjectId"}, "properties": obj{"Object": ref(schema), "ObjectId": id}, "additionalProperties": false}
	}
	g.schemas[schema+"Page"] = page(schema, id)
	var keyParams []any
	fields := k.Keys()
	if !byID {
		fields = k.Fields[:1] // the state kind's first field orders and names its entries
	}
	for _, f := range fields {
		keyParams = append(keyParams, obj{"name": f.Name, "in": "query", "description": "key field", "schema": obj{"type": jsonType(f.Type)}})
	}
	if k.Class == model.State {
		defer g.sourced(base, base+"s")
	}
	g.op(base, "GET", obj{
		"operationId": "getState" + pathName, "tags": []any{k.Name}, "summary": "Read the state of one " + pathName,
		"parameters": keyParams,
		"responses":  obj{"200": reply("the state", ref(schema+"Reply"))},
	})
	g.op(base+"s", "GET", obj{
		"operationId": "listState" + pathName + "s", "tags": []any{k.Name}, "summary": "List the state of every " + pathName,
		"parameters": pagingParams(),
		"responses":  obj{"200": reply("one page", ref(schema+"Page"))},
	})
	if byID {
		g.op(base+"/{ObjectId}", "GET", obj{
			"operationId": "getState" + pathName + "ById", "tags": []any{k.Name}, "summary": "Read the state of one " + pathName + " by ObjectId",
			"parameters": []any{param("ObjectId")},
			"responses":  obj{"200": reply("the state", ref(schema+"Reply"))},
		})
	}
}

// sourced says, on the reads of a state-only kind, where its objects come
// from (x-swmgr-source: backend, service or configlog).
func (g *gen) sourced(paths ...string) {
	src := g.kind.Source
	if src == model.SourceBackend {
		src = "backend"
	}
	for _, p := range paths {
		g.paths[p].(obj)["get"].(obj)["x-swmgr-source"] = src
	}
}

func (g *gen) action(k *model.Kind) {
	g.kind = k
	defer func() { g.kind = nil }()
	g.schemas[k.Name] = g.schema(k, actionForm, k.Doc)
	answers := []any{ref("Success"), ref("CommitResult"), ref("DryRunResult"), ref("LifecycleResult")}
	if len(k.Answer) > 0 {
		a := record(k.Answer, readForm)
		props := a["properties"].(obj)
		props["Result"], props["DryRun"] = obj{"type": "string", "const": "Success"}, obj{"type": "boolean"}
		required := []any{"Result"}
		for _, f := range k.Answer {
			required = append(required, f.Name)
		}
		a["required"], a["additionalProperties"], a["description"] = required, false, "The answer of "+k.Name+"."
		g.schemas[k.Name+"Answer"] = a
		answers = []any{ref(k.Name + "Answer")}
	}
	g.op(prefix+"/action/"+k.Name, "POST", obj{
		"operationId": "action" + k.Name, "tags": []any{"Actions"}, "summary": k.Doc,
		"parameters":  []any{param("dry_run")},
		"requestBody": obj{"content": jsonContent(ref(k.Name))},
		"responses":   obj{"200": reply("done", obj{"anyOf": answers})},
	})
}

func (g *gen) transactions() {
	t := []any{"Candidates"}
	g.op(prefix+"/candidates", "POST", obj{
		"access": operator, "operationId": "createCandidate", "tags": t, "summary": "Start a candidate: a private draft of the running configuration",
		"requestBody": obj{"content": jsonContent(ref("NewCandidate"))},
		"responses":   obj{"201": reply("made", ref("CandidateCreated"), "Location")},
	})
	g.op(prefix+"/candidates", "GET", obj{
		"operationId": "listCandidates", "tags": t, "summary": "List the caller's candidates",
		"responses": obj{"200": reply("the caller's candidates", ref("CandidateList"))},
	})
	cp := []any{param("CandidateId")}
	g.op(prefix+"/candidates/{CandidateId}", "GET", obj{
		"operationId": "getCandidate", "tags": t, "summary": "Describe a candidate (its owner's, or any as an admin)", "parameters": cp,
		"responses": obj{"200": reply("the candidate", ref("CandidateInfo"))},
	})
	g.op(prefix+"/candidates/{CandidateId}", "DELETE", obj{
		"access": operator, "operationId": "discardCandidate", "tags": t, "summary": "Discard a candidate (its owner's, or any as an admin)", "parameters": cp,
		"responses": obj{"200": reply("discarded", ref("Success"))},
	})
	g.op(prefix+"/candidates/{CandidateId}/diff", "GET", obj{
		"operationId": "diffCandidate", "tags": t, "summary": "What committing the candidate would change", "parameters": cp,
		"responses": obj{"200": reply("the changes", ref("CandidateDiff"))},
	})
	g.op(prefix+"/candidates/{CandidateId}/edits", "POST", obj{
		"access": operator, "operationId": "stageCandidateEdits", "tags": t, "summary": "Stage a list of edits into a candidate, all or none",
		"parameters":  cp,
		"requestBody": obj{"content": jsonContent(ref("StageEdits"))},
		"responses":   obj{"200": reply("staged", ref("StagedEdits"))},
	})
	g.op(prefix+"/candidates/{CandidateId}/commit", "POST", obj{
		"access": operator, "operationId": "commitCandidate", "tags": t, "summary": "Commit a candidate as one revision, optionally rolled back unless confirmed",
		"parameters":  append(cp, param("dry_run"), param("If-Match")),
		"requestBody": obj{"content": jsonContent(ref("CommitOptions"))},
		"responses":   obj{"200": reply("committed (Revision absent when there was nothing to commit)", ref("CommitResult"), "ETag")},
	})
	r := []any{"Revisions"}
	g.op(prefix+"/revisions", "GET", obj{
		"operationId": "listRevisions", "tags": r, "summary": "List the kept revisions, newest first", "parameters": pagingParams(),
		"responses": obj{"200": reply("one page", ref("RevisionPage"))},
	})
	g.op(prefix+"/revisions/{Revision}", "GET", obj{
		"operationId": "getRevision", "tags": r, "summary": "Read one revision", "parameters": []any{param("Revision")},
		"responses": obj{"200": reply("the revision", ref("Revision"))},
	})
	g.op(prefix+"/revisions/pending", "GET", obj{
		"operationId": "pendingConfirmation", "tags": r, "summary": "The commit awaiting confirmation, if any",
		"responses": obj{"200": reply("what awaits confirmation", ref("PendingConfirmation"))},
	})
	g.op(prefix+"/revisions/{Revision}/confirm", "POST", obj{
		"access": operator, "operationId": "confirmRevision", "tags": r, "summary": "Confirm a revision committed with Confirm, so that it is kept", "parameters": []any{param("Revision")},
		"responses": obj{"200": reply("confirmed", ref("Success"))},
	})
	g.op(prefix+"/revisions/{Revision}/diff/{To}", "GET", obj{
		"operationId": "diffRevisions", "tags": r, "summary": "What changed in the configuration from after one revision to after another",
		"description": "Composed from the revision records between them: each object changed in between, as it was after Revision (Before) and after To (After); To may be the earlier one. Secrets read \"******\". 404 unless both and every revision between are kept.",
		"parameters":  []any{param("Revision"), param("To")},
		"responses":   obj{"200": reply("the changes", ref("RevisionDiff"))},
	})
	g.op(prefix+"/revisions/{Revision}/cancel", "POST", obj{
		"access": operator, "operationId": "cancelRevision", "tags": r, "summary": "Roll back now a revision committed with Confirm that awaits confirmation",
		"description": "The rollback is a revision of its own (RollbackRevision). 409 when the revision does not await confirmation, 404 when it was not made yet; who may cancel is who may confirm.",
		"parameters":  []any{param("Revision")},
		"responses":   obj{"200": reply("rolled back", ref("CancelResult"))},
	})
	g.op(prefix+"/events", "GET", obj{
		"operationId": "events", "tags": r,
		"summary":     "The change feed: Server-Sent Events, one per commit",
		"description": "Each event is `id: <revision>`, `event: commit`, `data: <Revision as JSON>`. Resume with the Last-Event-ID header or ?since=<revision>; without either, the feed starts with the next commit. An idle feed sends a comment line every `heartbeat` seconds. `event: error` says which revisions are no longer kept (one event for the whole gap: FirstMissing, LastMissing, ContinuesWith; the stream goes on with the oldest kept), or that the subscriber fell too far behind and was dropped (its data then has LastEventId: reconnect with it). HEAD answers the stream's headers (or the 400 a GET would get) and ends at once.",
		"parameters": []any{
			obj{"name": "since", "in": "query", "schema": obj{"type": "integer", "minimum": 0}},
			obj{"name": "heartbeat", "in": "query", "schema": obj{"type": "integer", "minimum": 1, "maximum": 300, "default": 15}},
			obj{"name": "Last-Event-ID", "in": "header", "schema": obj{"type": "string"}},
		},
		"responses": obj{"200": obj{"description": "the stream", "content": obj{"text/event-stream": obj{"schema": obj{"type": "string"}, "x-swmgr-event-data": ref("Revision")}}}},
	})
}

func (g *gen) service() {
	t := []any{"Service"}
	g.op(Path, "GET", obj{
		"operationId": "openapi", "tags": t, "summary": "This document", "security": []any{obj{}},
		"responses": obj{"200": reply("the OpenAPI document", obj{"type": "object"})},
	})
	g.op(BrowserPath, "GET", obj{
		"operationId": "apiDocs", "tags": t, "summary": "The API browser: a page (Swagger UI, embedded) to read this document and try its requests", "security": []any{obj{}},
		"responses": obj{"200": obj{"description": "the page", "content": obj{"text/html": obj{"schema": obj{"type": "string"}}}}},
	})
	g.op("/healthz", "GET", obj{
		"operationId": "healthz", "tags": t, "summary": "Alive: the process answers", "security": []any{obj{}},
		"responses": obj{"200": reply("alive", obj{"type": "object", "required": []any{"Status"}, "properties": obj{"Status": obj{"const": "alive"}}, "additionalProperties": false})},
	})
	ready := obj{"type": "object", "required": []any{"Ready"}, "properties": obj{"Ready": obj{"type": "boolean"}}, "additionalProperties": false}
	g.op("/readyz", "GET", obj{
		"operationId": "readyz", "tags": t, "summary": "Ready: the switch was reconciled with the stored configuration at start", "security": []any{obj{}},
		"responses": obj{"200": reply("ready", ready), "503": reply("not ready yet", ready)},
	})
	webhookReply := obj{"type": "object", "required": []any{"Result", "Message"}, "additionalProperties": false,
		"properties": obj{"Result": obj{"type": "string"}, "Message": obj{"type": "string"}}}
	g.op(model.IntentWebhookPath, "POST", obj{
		"access": model.Reading, "operationId": "intentWebhook", "tags": t, "security": []any{obj{}},
		"summary":     "A git server's push webhook: fetch the IntentSource's document now (no login: the WebhookSecret authenticates it)",
		"description": fmt.Sprintf("Authenticated by the IntentSource's WebhookSecret alone: X-Hub-Signature-256 (GitHub, Gitea, Forgejo: sha256= and the hex HMAC-SHA256 of the raw body), X-Gitea-Signature (its hex digits), or X-Gitlab-Token (the secret). The body (at most %d bytes; JSON, or GitHub's form encoding) is a push: one to another ref than TargetRevision is ignored (200), one to it queues a fetch (202; pushes coalesce into one fetch). A wrong or missing signature is 403 whatever was wrong; refused webhooks count as failed logins of the client's address (429 with Retry-After once locked out). docs/ztp.md.", model.MaxIntentWebhookBody),
		"parameters": []any{
			obj{"name": "X-Hub-Signature-256", "in": "header", "schema": obj{"type": "string"}},
			obj{"name": "X-Gitea-Signature", "in": "header", "schema": obj{"type": "string"}},
			obj{"name": "X-Gitlab-Token", "in": "header", "schema": obj{"type": "string"}},
		},
		"requestBody": obj{"content": obj{"application/json": obj{"schema": obj{"type": "object"}}, "application/x-www-form-urlencoded": obj{"schema": obj{"type": "object"}}}},
		"responses":   obj{"202": reply("a fetch is queued", webhookReply), "200": reply("accepted, nothing to fetch (another ref, another event)", webhookReply)},
	})
	g.op("/metrics", "GET", obj{
		"operationId": "metrics", "tags": t, "summary": "Prometheus metrics (credentials needed except on the loopback HTTP listener)",
		"responses": obj{"200": obj{"description": "the Prometheus text format", "content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}},
	})
}

func (g *gen) tags() []any {
	var out []any
	for _, k := range g.reg.Kinds() {
		if k.Class != model.Action {
			out = append(out, obj{"name": k.Name, "description": fmt.Sprintf("%s (%s)", k.Doc, k.Class)})
		}
	}
	return append(out,
		obj{"name": "Actions", "description": "Operations that are not objects."},
		obj{"name": "Candidates", "description": "Private drafts of the configuration, committed as one revision. A candidate belongs to the user who opened it: only they may read, stage into, diff or commit it (anyone else gets 404, an admin 403); an admin may also describe and discard another user's."},
		obj{"name": "Revisions", "description": "The history of commits and the change feed."},
		obj{"name": "Service", "description": "Health, metrics, this document and its browser."})
}
