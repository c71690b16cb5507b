package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

// firefox is headless Firefox driven through WebDriver BiDi (its remote
// agent on --remote-debugging-port: a WebSocket at /session, JSON
// commands and answers) with no library: one browsing context (tab).
// Firefox no longer speaks the DevTools protocol.
type firefox struct {
	browserPage
	t       testing.TB
	cmd     *exec.Cmd
	ws      *wsConn
	calls   browserCalls[bidiAnswer]
	stderr  *syncBuffer
	context string // the tab's browsing context
}

type bidiAnswer struct {
	Type    string          `json:"type"` // success, error, event
	ID      int             `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// firefoxPath is the path of Debian's firefox-esr, or the test skips
// (fails under CI).
func firefoxPath(t testing.TB) string {
	t.Helper()
	return testneed.Program(t, "firefox-esr", "firefox-esr", "firefox")
}

// firefoxPrefs keep Firefox off every network but loopback (a proxy that
// is not there, loopback excepted) and quiet at start. The remote agent
// sets its own recommended preferences (no updates, no telemetry) too.
const firefoxPrefs = `user_pref("network.proxy.type", 1);
user_pref("network.proxy.http", "127.0.0.1");
user_pref("network.proxy.http_port", 9);
user_pref("network.proxy.ssl", "127.0.0.1");
user_pref("network.proxy.ssl_port", 9);
user_pref("network.proxy.no_proxies_on", "127.0.0.1");
user_pref("network.proxy.allow_hijacking_localhost", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
`

// newFirefox starts headless Firefox with one tab of width x height CSS
// pixels, and stops it when the test ends.
func newFirefox(t testing.TB, width, height int) *firefox {
	t.Helper()
	path := firefoxPath(t)
	profile := t.TempDir()
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxPrefs), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &firefox{t: t, calls: newBrowserCalls[bidiAnswer](), stderr: &syncBuffer{}}
	f.browserPage = browserPage{t: t, evaluate: f.tryEval, load: f.navigate}
	f.cmd = exec.Command(path, "--headless", "--no-remote", "--profile", profile, "--remote-debugging-port=0",
		fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	f.cmd.Env = append(os.Environ(), "HOME="+profile, "XDG_CONFIG_HOME="+filepath.Join(profile, "config"), "XDG_CACHE_HOME="+filepath.Join(profile, "cache"))
	// Its content processes are its children: the group ends with it.
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := f.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f.ws != nil {
			f.send(nil, "browser.close", map[string]any{})
			f.ws.Close()
		}
		syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
		f.cmd.Wait()
		if t.Failed() {
			t.Logf("firefox logged:\n%s", tail(f.stderr.String(), 2000))
		}
	})
	// It says where its remote agent listens (port 0: a free one).
	listening := regexp.MustCompile(`WebDriver BiDi listening on ws://([0-9.:]+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			f.stderr.Write(append(sc.Bytes(), '\n'))
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(f.stderr, stderr)
	}()
	var addr string
	select {
	case addr = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("firefox did not start its remote agent within a minute:\n%s", tail(f.stderr.String(), 2000))
	}
	if f.ws, err = dialWebSocket(addr, "/session"); err != nil {
		t.Fatal(err)
	}
	go f.read()
	f.call(nil, "session.new", map[string]any{"capabilities": map[string]any{}})
	var tree struct{ Contexts []struct{ Context string } }
	f.call(&tree, "browsingContext.getTree", map[string]any{})
	if len(tree.Contexts) == 0 {
		t.Fatal("firefox has no browsing context")
	}
	f.context = tree.Contexts[0].Context
	f.call(nil, "browsingContext.setViewport", map[string]any{"context": f.context, "viewport": map[string]any{"width": width, "height": height}})
	return f
}

// read dispatches Firefox's answers to the commands waiting for them
// (events are not used).
func (f *firefox) read() {
	defer close(f.calls.closed)
	for {
		msg, err := f.ws.readMessage()
		if err != nil {
			return
		}
		var a bidiAnswer
		if json.Unmarshal(msg, &a) != nil || a.Type == "event" {
			continue
		}
		f.calls.answer(a.ID, a)
	}
}

func (f *firefox) send(result any, method string, params any) error {
	id, ch := f.calls.open()
	data, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := f.ws.writeText(data); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	a, err := f.calls.wait(method, ch, func() string { return "firefox closed its remote agent:\n" + tail(f.stderr.String(), 2000) })
	if err != nil {
		return err
	}
	if a.Type == "error" {
		return fmt.Errorf("%s: %s: %s", method, a.Error, a.Message)
	}
	if result != nil {
		return json.Unmarshal(a.Result, result)
	}
	return nil
}

func (f *firefox) call(result any, method string, params any) {
	f.t.Helper()
	if err := f.send(result, method, params); err != nil {
		f.t.Fatal(err)
	}
}

// navigate loads url and waits for the document complete.
func (f *firefox) navigate(url string) {
	f.t.Helper()
	f.call(nil, "browsingContext.navigate", map[string]any{"context": f.context, "url": url, "wait": "complete"})
}

// tryEval evaluates expr in the tab, a promise awaited. BiDi answers
// values in its own serialization: the page's JSON.stringify of the
// value travels as a string instead, decoded into result.
func (f *firefox) tryEval(result any, expr string) error {
	var r struct {
		Type   string `json:"type"` // success, exception
		Result struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := f.send(&r, "script.evaluate", map[string]any{
		"expression":   "(async () => JSON.stringify(await (" + expr + ")))()",
		"target":       map[string]any{"context": f.context},
		"awaitPromise": true,
	}); err != nil {
		return err
	}
	if r.Type == "exception" {
		return fmt.Errorf("%s: %s", expr, r.ExceptionDetails.Text)
	}
	if result != nil && r.Result.Type == "string" {
		return json.Unmarshal([]byte(r.Result.Value), result)
	}
	return nil
}

// screenshot saves the whole document as dir/name.png.
func (f *firefox) screenshot(dir, name string) string {
	f.t.Helper()
	var shot struct{ Data string }
	f.call(&shot, "browsingContext.captureScreenshot", map[string]any{"context": f.context, "origin": "document"})
	return saveScreenshot(f.t, dir, name, shot.Data)
}
