package api

import (
	"io"
	"strings"
	"testing"
)

// Small things: candidates listed, an empty commit said
// so, a hint for state paths spelled with "State", a bare If-Match
// revision, and bodies that end their line.
func TestSmallThings(t *testing.T) {
	s := newTxnServer(t)

	code, body, _ := s.do("POST", "/candidates", `{"Comment":"empty"}`)
	if code != 201 {
		t.Fatalf("new candidate: %d %v", code, body)
	}
	id, _ := body["CandidateId"].(string)
	code, body, _ = s.do("GET", "/candidates", "")
	list, _ := body["Candidates"].([]any)
	if code != 200 || len(list) != 1 || list[0].(map[string]any)["CandidateId"] != id {
		t.Errorf("GET /candidates: %d %v", code, body)
	}
	code, body, _ = s.do("POST", "/candidates/"+id+"/commit", "")
	if _, has := body["Revision"]; code != 200 || has || !strings.Contains(body["Message"].(string), "nothing to commit") {
		t.Errorf("empty commit: %d %v", code, body)
	}

	for path, want := range map[string]string{"/state/ConfigLogState": "/public/v1/state/ConfigLog", "/state/systemparamstate": "/public/v1/state/systemparam"} {
		code, body, _ = s.do("GET", path, "")
		if msg, _ := body["Result"].(string); code != 404 || !strings.HasSuffix(msg, want) {
			t.Errorf("GET %s: %d %v, want a hint to %s", path, code, body, want)
		}
	}

	_, _, hdr := s.do("GET", "/config/SystemParam", "")
	etag := strings.Trim(hdr.Get("ETag"), `"`)
	if code, body, _ = s.do("PATCH", "/config/SystemParam", `{"Description":"bare"}`, "If-Match", etag); code != 200 {
		t.Errorf("If-Match: %s (unquoted, current): %d %v", etag, code, body)
	}
	code, body, _ = s.do("PATCH", "/config/SystemParam", `{"Description":"stale"}`, "If-Match", etag)
	if msg, _ := body["Result"].(string); code != 412 || !strings.Contains(msg, "has changed since") {
		t.Errorf("If-Match: %s (unquoted, stale): %d %v", etag, code, body)
	}

	for _, path := range []string{"/config/SystemParam", "/config/NoSuchKind", "/candidates", "/revisions"} {
		resp, err := s.client.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if raw := string(b); !strings.HasSuffix(raw, "}\n") {
			t.Errorf("GET %s: the body does not end with a newline: %q", path, raw)
		}
	}
}
