package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

// browser is Debian's headless Chromium driven through the DevTools
// protocol over a pipe (--remote-debugging-pipe: NUL-terminated JSON on
// file descriptors 3 and 4), with no library: one page (tab), its
// commands and the answers to them. Chromium resolves no name but
// loopback and contacts no service of its own.
type browser struct {
	browserPage
	t       testing.TB
	cmd     *exec.Cmd
	in      *os.File // Chromium reads commands from it
	calls   browserCalls[cdpAnswer]
	session string // the page's
	stderr  *syncBuffer
}

type cdpAnswer struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// chromium is the path of Debian's chromium, or the test skips (fails
// under CI).
func chromium(t testing.TB) string {
	t.Helper()
	return testneed.Program(t, "chromium", "chromium", "chromium-browser")
}

// serverAndChromium starts swmgr and Chromium with a blank page of width
// x height CSS pixels; with -short, or without chromium, the test skips.
func serverAndChromium(t *testing.T, width, height int) (*server, *browser) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	chromium(t)
	return startServer(t, ""), newBrowser(t, width, height)
}

// newBrowser starts Chromium with one blank page of width x height CSS
// pixels, and stops it when the test ends.
func newBrowser(t testing.TB, width, height int) *browser {
	t.Helper()
	path := chromium(t)
	profile := t.TempDir()
	cmdIn, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, cmdOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, in: in, calls: newBrowserCalls[cdpAnswer](), stderr: &syncBuffer{}}
	b.browserPage = browserPage{t: t, evaluate: b.tryEval, load: b.navigate}
	b.cmd = exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--user-data-dir="+profile,
		"--remote-debugging-pipe", fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	b.cmd.Env = append(os.Environ(), "HOME="+profile, "XDG_CONFIG_HOME="+filepath.Join(profile, "config"), "XDG_CACHE_HOME="+filepath.Join(profile, "cache"))
	b.cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdIn.Close()
	cmdOut.Close()
	go b.read(out)
	t.Cleanup(func() {
		in.Close()
		b.cmd.Process.Kill()
		b.cmd.Wait()
		if t.Failed() {
			t.Logf("chromium logged:\n%s", tail(b.stderr.String(), 2000))
		}
	})
	var target struct{ TargetID string }
	b.callBrowser(&target, "Target.createTarget", map[string]any{"url": "about:blank"})
	var attached struct{ SessionID string }
	b.callBrowser(&attached, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	b.session = attached.SessionID
	b.call(nil, "Page.enable", nil)
	b.call(nil, "Runtime.enable", nil)
	b.call(nil, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
	return b
}

// read dispatches Chromium's answers to the calls waiting for them
// (events are not used).
func (b *browser) read(out *os.File) {
	defer close(b.calls.closed)
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var a cdpAnswer
		if json.Unmarshal(msg[:len(msg)-1], &a) != nil || a.ID == 0 {
			continue
		}
		b.calls.answer(a.ID, a)
	}
}

func (b *browser) send(session string, result any, method string, params any) error {
	id, ch := b.calls.open()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	a, err := b.calls.wait(method, ch, func() string { return "chromium exited:\n" + tail(b.stderr.String(), 2000) })
	if err != nil {
		return err
	}
	if a.Error != nil {
		return fmt.Errorf("%s: %s", method, a.Error.Message)
	}
	if result != nil {
		return json.Unmarshal(a.Result, result)
	}
	return nil
}

func (b *browser) callBrowser(result any, method string, params any) {
	b.t.Helper()
	if err := b.send("", result, method, params); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) call(result any, method string, params any) {
	b.t.Helper()
	if err := b.send(b.session, result, method, params); err != nil {
		b.t.Fatal(err)
	}
}

// navigate loads url and waits for its load event's scripts to have run
// (the document complete).
func (b *browser) navigate(url string) {
	b.t.Helper()
	b.call(nil, "Page.navigate", map[string]any{"url": url})
	b.waitFor("document.readyState === 'complete' && location.href === "+jsString(url), 30*time.Second)
}

func (b *browser) tryEval(result any, expr string) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := b.send(b.session, &r, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if result != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, result)
	}
	return nil
}

// screenshot saves the page as dir/name.png.
func (b *browser) screenshot(dir, name string) string {
	b.t.Helper()
	var shot struct{ Data string }
	b.call(&shot, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	return saveScreenshot(b.t, dir, name, shot.Data)
}
