package openapi

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
)

// TestCommittedCopyIsCurrent keeps docs/openapi.json equal to what the
// model generates. Regenerate with: go run ./cmd/swmgr openapi > docs/openapi.json
func TestCommittedCopyIsCurrent(t *testing.T) {
	got, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(JSON(model.Builtin())) {
		t.Fatal("docs/openapi.json is out of date: run `go run ./cmd/swmgr openapi > docs/openapi.json`")
	}
}

// TestDocumentCoversTheModel checks that what the model declares reaches the
// document: every kind's schema and paths, every field with its type,
// range, enum, default and secrecy, every action and every error code.
func TestDocumentCoversTheModel(t *testing.T) {
	reg := model.Builtin()
	var doc struct {
		Paths      map[string]map[string]any
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(JSON(reg), &doc); err != nil {
		t.Fatal(err)
	}
	prop := func(schema, field string) map[string]any {
		p, _ := doc.Components.Schemas[schema]["properties"].(map[string]any)
		f, _ := p[field].(map[string]any)
		return f
	}
	for _, k := range reg.Kinds() {
		var paths []string
		switch k.Class {
		case model.Config:
			paths = []string{"/public/v1/config/" + k.Name, "/public/v1/config/" + k.Name + "s", "/public/v1/config/" + k.Name + "/{ObjectId}",
				"/public/v1/candidates/{CandidateId}/config/" + k.Name, "/public/v1/state/" + k.Name + "s"}
		case model.State:
			paths = []string{"/public/v1/state/" + strings.TrimSuffix(k.Name, "State") + "s"}
		case model.Action:
			paths = []string{"/public/v1/action/" + k.Name}
		}
		for _, p := range paths {
			if doc.Paths[p] == nil {
				t.Errorf("%s: no path %s", k.Name, p)
			}
		}
		if post := doc.Paths["/public/v1/config/"+k.Name]["post"]; (post != nil) != k.Creatable() {
			t.Errorf("%s: POST documented %v, creatable %v", k.Name, post != nil, k.Creatable())
		}
		for _, f := range k.Fields {
			p := prop(k.Name, f.Name)
			if p == nil {
				t.Errorf("%s.%s: not in the schema", k.Name, f.Name)
				continue
			}
			want := map[model.Type]string{model.String: "string", model.Int: "integer", model.Bool: "boolean", model.StringList: "array", model.Record: "object", model.RecordList: "array", model.Document: "object"}[f.Type]
			if p["type"] != want {
				t.Errorf("%s.%s: type %v, want %s", k.Name, f.Name, p["type"], want)
			}
			if f.Range != nil && (p["minimum"] != float64(f.Range.Min) || p["maximum"] != float64(f.Range.Max)) {
				t.Errorf("%s.%s: range %v..%v, want %d..%d", k.Name, f.Name, p["minimum"], p["maximum"], f.Range.Min, f.Range.Max)
			}
			if f.Default != nil && p["default"] == nil {
				t.Errorf("%s.%s: default %v missing", k.Name, f.Name, f.Default)
			}
			if f.Secret != model.Public && p["writeOnly"] != true {
				t.Errorf("%s.%s: a secret, not writeOnly", k.Name, f.Name)
			}
			if len(f.Enum) > 0 && f.Type == model.String && f.Secret == model.Public {
				enum, _ := p["enum"].([]any)
				for _, e := range f.Enum {
					if !slices.Contains(enum, any(e)) {
						t.Errorf("%s.%s: enum lacks %q", k.Name, f.Name, e)
					}
				}
			}
			if f.Key && p["x-swmgr-key"] != true {
				t.Errorf("%s.%s: key not marked", k.Name, f.Name)
			}
		}
		if k.Class == model.Config {
			for _, f := range k.StateOnly {
				if prop(k.StateName(), f.Name) == nil {
					t.Errorf("%s: state field %s not in the schema", k.StateName(), f.Name)
				}
			}
		}
	}
	codeProp := doc.Components.Schemas["ErrorBody"]["properties"].(map[string]any)["Error"].(map[string]any)["properties"].(map[string]any)["Code"].(map[string]any)
	for _, c := range apierr.Codes() {
		if !slices.Contains(codeProp["enum"].([]any), any(c)) {
			t.Errorf("error code %q not in the document", c)
		}
	}
	for _, p := range []string{"/public/v1/candidates", "/public/v1/candidates/{CandidateId}/commit", "/public/v1/revisions/{Revision}", "/public/v1/events", Path, "/healthz", "/readyz", "/metrics"} {
		if doc.Paths[p] == nil {
			t.Errorf("no path %s", p)
		}
	}
}
