package test

import (
	"testing"
	"time"
)

// TestWebUIInFirefox: the page works in Firefox as in Chromium (driven
// through WebDriver BiDi): a user logs in through the form, the front
// panel shows the 32 ports with the states REST reports, and a port set
// up and down over REST follows through the feed without a reload. It
// keeps a screenshot (firefox-panel).
func TestWebUIInFirefox(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Firefox")
	}
	firefoxPath(t)
	s := startServer(t, "")
	shots := screenshotDir(t)
	started := time.Now()
	f := newFirefox(t, 1280, 900)
	t.Logf("firefox's remote agent answered %s after its start", time.Since(started).Round(time.Millisecond))
	f.openAsAdmin(s)
	checkPanel(t, &f.browserPage, s)
	followsPortOverREST(t, &f.browserPage, s)
	checkPanel(t, &f.browserPage, s)
	f.waitFor(`document.querySelector('#system [data-field="memory"]').textContent !== ''`, 20*time.Second)
	f.screenshot(shots, "firefox-panel")
	t.Logf("the test's page work in firefox took %s", time.Since(started).Round(time.Millisecond))
}
