package test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// browserPage is what the web UI's tests do in a page of a browser, whichever
// protocol drives it (Chromium's DevTools protocol, Firefox's WebDriver
// BiDi): evaluate a script and act through the DOM.
type browserPage struct {
	t testing.TB
	// evaluate evaluates the JavaScript expression expr in the page (a
	// promise is awaited) and decodes its value into result (nil: none).
	evaluate func(result any, expr string) error
}

// eval evaluates expr in the page (a promise is awaited) and decodes its
// value into result.
func (p *browserPage) eval(result any, expr string) {
	p.t.Helper()
	if err := p.evaluate(result, expr); err != nil {
		p.t.Fatal(err)
	}
}

// waitFor waits until the JavaScript expression cond is true in the page,
// and returns how long that took; the test fails after timeout.
func (p *browserPage) waitFor(cond string, timeout time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	for {
		var ok bool
		err := p.evaluate(&ok, "!!("+cond+")")
		if err == nil && ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			var text string
			p.evaluate(&text, "document.body ? document.body.innerText.slice(0, 2000) : ''")
			p.t.Fatalf("after %s the page still does not have %s (err %v); it shows:\n%s", timeout, cond, err, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// click clicks the element the CSS selector names (through the DOM, as a
// person's click would run the same listeners).
func (p *browserPage) click(selector string) {
	p.t.Helper()
	p.waitFor("document.querySelector("+jsString(selector)+")", 20*time.Second)
	p.eval(nil, "document.querySelector("+jsString(selector)+").click()")
}

// fill sets the value of the form field the selector names.
func (p *browserPage) fill(selector, value string) {
	p.t.Helper()
	p.eval(nil, "document.querySelector("+jsString(selector)+").value = "+jsString(value))
}

// logIn logs name in through the page's form, and waits for the front
// panel's 32 ports and the change feed open.
func (p *browserPage) logIn(name, password string) {
	p.t.Helper()
	p.fill("#login-user", name)
	p.fill("#login-password", password)
	p.click("#login-submit")
	p.waitFor("document.querySelectorAll('#ports [data-port]').length === 32 && document.body.dataset.feed === 'open'", 30*time.Second)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// saveScreenshot writes a PNG a browser sent in base64 as dir/name.png.
func saveScreenshot(t testing.TB, dir, name, data string) string {
	t.Helper()
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
