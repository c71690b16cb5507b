package test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
	// load loads url and waits for its document complete.
	load func(url string)
}

// openAsAdmin loads s's page and logs in through its form as the
// harness's first admin.
func (p *browserPage) openAsAdmin(s *server) {
	p.t.Helper()
	p.load("http://" + s.addr + "/")
	p.waitFor("!document.getElementById('login').hidden", 20*time.Second)
	p.logIn("admin", blackBoxAdminPassword)
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

// browserCalls pairs a browser's answers with the commands waiting for
// them, by id: the DevTools protocol's and WebDriver BiDi's alike.
type browserCalls[A any] struct {
	mu      sync.Mutex
	next    int
	waiting map[int]chan A
	closed  chan struct{} // closed when the browser's end is
}

func newBrowserCalls[A any]() browserCalls[A] {
	return browserCalls[A]{waiting: map[int]chan A{}, closed: make(chan struct{})}
}

// open returns the next command's id and the channel its answer comes on.
func (c *browserCalls[A]) open() (int, chan A) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	ch := make(chan A, 1)
	c.waiting[c.next] = ch
	return c.next, ch
}

// answer hands a to the command id, if one waits for it.
func (c *browserCalls[A]) answer(id int, a A) {
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

// wait waits for method's answer on ch, at most a minute; gone says why
// there is none when the browser's end closed.
func (c *browserCalls[A]) wait(method string, ch chan A, gone func() string) (A, error) {
	var none A
	select {
	case a := <-ch:
		return a, nil
	case <-c.closed:
		return none, fmt.Errorf("%s: %s", method, gone())
	case <-time.After(time.Minute):
		return none, fmt.Errorf("%s: no answer within a minute", method)
	}
}
