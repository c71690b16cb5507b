package test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAPIBrowser loads /api-docs/ in headless Chromium (Debian's chromium,
// installed by .ci/run) and checks that the page lists every tag of the
// served OpenAPI document (a kind, or Actions, Candidates, ...) and, opened
// on one kind by its deep link, every operation of that kind. The browser
// is kept off every network but loopback, so the page can only render from
// what swmgr itself serves.
func TestAPIBrowser(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium on this machine: .ci/run installs Debian's chromium")
		}
		t.Skip("no chromium on this machine (Debian package chromium; .ci/run installs it)")
	}
	s := startServer(t, "")
	root := "http://" + s.addr

	// The static files: the page, with a policy that keeps it to this origin.
	resp, err := http.Get(root + "/api-docs")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/api-docs/" || !strings.Contains(string(page), "swagger-ui-bundle.js") {
		t.Fatalf("GET /api-docs: %d at %s: %.200s", resp.StatusCode, resp.Request.URL, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("page's Content-Security-Policy %q does not keep it to this switch", csp)
	}
	for _, f := range []string{"swagger-ui-bundle.js", "swagger-ui.css", "init.js"} {
		resp, err := http.Get(root + "/api-docs/" + f)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET /api-docs/%s: %d", f, resp.StatusCode)
		}
	}
	if resp, err := http.Post(root+"/api-docs/", "application/json", strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api-docs/: %d, want 405", resp.StatusCode)
	}

	var doc struct {
		Tags  []struct{ Name string }
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(s.expect(t, 200, "GET", "/openapi.json", "").raw, &doc); err != nil {
		t.Fatal(err)
	}
	const kind = "NtpServer"
	var ops []string
	for _, methods := range doc.Paths {
		for _, raw := range methods {
			var op struct {
				OperationID string
				Tags        []string
			}
			if json.Unmarshal(raw, &op) == nil && len(op.Tags) > 0 && op.Tags[0] == kind {
				ops = append(ops, op.OperationID)
			}
		}
	}
	if len(doc.Tags) < 10 || len(ops) < 5 {
		t.Fatalf("document has %d tags and %d operations of %s", len(doc.Tags), len(ops), kind)
	}

	dom := dumpDOM(t, browser, root+"/api-docs/#/"+kind)
	for _, tag := range doc.Tags {
		if !strings.Contains(dom, `data-tag="`+tag.Name+`"`) {
			t.Errorf("the page does not list tag %s", tag.Name)
		}
	}
	for _, id := range ops {
		if !strings.Contains(dom, `id="operations-`+kind+`-`+id+`"`) {
			t.Errorf("the page opened on %s does not list its operation %s", kind, id)
		}
	}
	if t.Failed() {
		t.Logf("DOM: %.3000s", dom)
	}
}

// dumpDOM loads url in headless Chromium and returns the DOM once the
// page's scripts have run. Chromium resolves no name but loopback and
// contacts no service of its own.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	profile := t.TempDir()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--user-data-dir="+profile,
		"--virtual-time-budget=20000", "--dump-dom", url)
	cmd.Env = append(os.Environ(), "HOME="+profile, "XDG_CONFIG_HOME="+filepath.Join(profile, "config"), "XDG_CACHE_HOME="+filepath.Join(profile, "cache"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, tail(stderr.String(), 2000))
	}
	return string(out)
}
