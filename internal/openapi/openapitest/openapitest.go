// Package openapitest checks, in tests, that what swmgr answers is what its
// OpenAPI document says: every JSON response a test receives is validated
// against the schema of its path, method and status, so that the document
// cannot drift from the server's behaviour.
//
// Only tests import it; it is the one place that pulls in kin-openapi.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/openapi"
)

// Validator checks responses against the document of a registry.
type Validator struct {
	reg *model.Registry
	doc *openapi3.T

	mu      sync.Mutex
	checked map[string]int // "METHOD template status" -> responses validated
}

var (
	builtinOnce sync.Once
	builtin     *Validator
	builtinErr  error
)

// Builtin is the validator of the built-in model, loaded once per test
// binary.
func Builtin() (*Validator, error) {
	builtinOnce.Do(func() { builtin, builtinErr = New(model.Builtin()) })
	return builtin, builtinErr
}

// New loads and validates the document generated from reg.
func New(reg *model.Registry) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapi.JSON(reg))
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	return &Validator{reg: reg, doc: doc, checked: map[string]int{}}, nil
}

// Doc is the loaded document.
func (v *Validator) Doc() *openapi3.T { return v.doc }

// Checked reports how many responses were validated, by
// "METHOD template status".
func (v *Validator) Checked() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]int, len(v.checked))
	for k, n := range v.checked {
		out[k] = n
	}
	return out
}

// Template maps a request path to the document's path that serves it: kind
// names resolved as the server resolves them (any case, a trailing s for a
// list), ids and numbers replaced by their parameters. ok is false for a
// path the document does not describe.
func (v *Validator) Template(path string) (string, bool) {
	var segs []string
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	switch {
	case len(segs) == 1 && (segs[0] == "healthz" || segs[0] == "readyz" || segs[0] == "metrics"):
		return "/" + segs[0], true
	case len(segs) < 3 || segs[0] != "public" || segs[1] != "v1":
		return "", false
	}
	segs = segs[2:]
	out := "/public/v1"
	if segs[0] == "candidates" && len(segs) >= 4 {
		out += "/candidates/{CandidateId}"
		segs = segs[2:]
	}
	switch segs[0] {
	case "openapi.json", "events":
		return out + "/" + segs[0], len(segs) == 1
	case "intent":
		return out + "/intent/webhook", len(segs) == 2 && segs[1] == "webhook"
	case "candidates":
		switch {
		case len(segs) == 1:
			return out + "/candidates", true
		case len(segs) == 2:
			return out + "/candidates/{CandidateId}", true
		case len(segs) == 3 && (segs[2] == "diff" || segs[2] == "commit" || segs[2] == "edits"):
			return out + "/candidates/{CandidateId}/" + segs[2], true
		}
		return "", false
	case "revisions":
		switch {
		case len(segs) == 1:
			return out + "/revisions", true
		case len(segs) == 2 && segs[1] == "pending":
			return out + "/revisions/pending", true
		case len(segs) == 2:
			return out + "/revisions/{Revision}", true
		case len(segs) == 3 && (segs[2] == "confirm" || segs[2] == "cancel"):
			return out + "/revisions/{Revision}/" + segs[2], true
		case len(segs) == 4 && segs[2] == "diff":
			return out + "/revisions/{Revision}/diff/{To}", true
		}
		return "", false
	}
	if len(segs) < 2 || len(segs) > 3 {
		return "", false
	}
	var (
		k      *model.Kind
		plural bool
		name   string
	)
	switch segs[0] {
	case "config", "action":
		c := model.Config
		if segs[0] == "action" {
			c = model.Action
		}
		if k, plural = v.reg.Resolve(c, segs[1]); k != nil {
			name = k.Name
		}
	case "state":
		if k, plural = v.reg.Resolve(model.State, segs[1]); k == nil {
			k, plural = v.reg.Resolve(model.Config, segs[1])
		}
		if k != nil {
			name = strings.TrimSuffix(k.StateName(), "State")
		}
	}
	if k == nil {
		return "", false
	}
	out += "/" + segs[0] + "/" + name
	if plural {
		out += "s"
	}
	if len(segs) == 3 {
		out += "/{ObjectId}"
	}
	return out, true
}

// Check validates one response: its status must be documented for the
// path and method (or covered by the error default), and a JSON body must
// match the schema of that status. An error response of a path the document
// does not know must still be the error body.
func (v *Validator) Check(method, path string, status int, header http.Header, body []byte) error {
	if method == http.MethodHead || method == http.MethodOptions || status == http.StatusNoContent || status == http.StatusNotModified {
		return nil
	}
	what := fmt.Sprintf("%s %s -> %d", method, path, status)
	ctype, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	template, known := v.Template(path)
	var op *openapi3.Operation
	if known {
		if item := v.doc.Paths.Value(template); item != nil {
			op = item.GetOperation(method)
		}
	}
	var resp *openapi3.Response
	switch {
	case op != nil:
		ref := op.Responses.Status(status)
		if ref == nil {
			ref = op.Responses.Default()
			if ref != nil && status < 400 {
				return fmt.Errorf("%s: status %d is not documented for %s %s", what, status, method, template)
			}
		}
		if ref == nil {
			return fmt.Errorf("%s: status %d is not documented for %s %s", what, status, method, template)
		}
		resp = ref.Value
	case status >= 400:
		resp = v.doc.Components.Responses["Error"].Value
		template = "(error)"
	default:
		return fmt.Errorf("%s: the document has no %s %s (as %q)", what, method, path, template)
	}
	v.mu.Lock()
	v.checked[fmt.Sprintf("%s %s %d", method, template, status)]++
	v.mu.Unlock()
	if len(resp.Content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("%s: the document says no body, got %q", what, trim(body))
		}
		return nil
	}
	media := resp.Content.Get(ctype)
	if media == nil {
		return fmt.Errorf("%s: Content-Type %q is not documented (%v)", what, ctype, mediaTypes(resp.Content))
	}
	if ctype != "application/json" || media.Schema == nil {
		return nil
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("%s: the body is not JSON: %v: %q", what, err, trim(body))
	}
	if err := media.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s: the body does not match the document: %v\nbody: %s", what, err, trim(body))
	}
	return nil
}

func mediaTypes(c openapi3.Content) []string {
	var out []string
	for k := range c {
		out = append(out, k)
	}
	return out
}

func trim(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "...(" + strconv.Itoa(len(b)) + " bytes)"
	}
	return string(b)
}

// Transport validates every response that passes through it; a response
// that does not match the document becomes the round trip's error, so the
// test that sent the request fails there. Streams (text/event-stream) pass
// unread.
type Transport struct {
	Base      http.RoundTripper // nil: http.DefaultTransport
	Validator *Validator
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := t.Validator.Check(req.Method, req.URL.Path, resp.StatusCode, resp.Header, body); err != nil {
		return nil, fmt.Errorf("OpenAPI: %w", err)
	}
	return resp, nil
}

// Wrap returns a copy of c whose responses are validated.
func (v *Validator) Wrap(c *http.Client) *http.Client {
	cp := *c
	cp.Transport = &Transport{Base: c.Transport, Validator: v}
	return &cp
}
