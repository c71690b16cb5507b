package test

import (
	"strings"
	"testing"
	"time"
)

// TestWebUIShowsLAGs: a LAG made over REST appears on the front panel
// without a reload: its member ports carry its name (in text, for people
// who do not see the picture, and as data-lag), and the panel's list of
// port channels says its state and members; deleted, it goes. A
// screenshot of the panel with the LAG is kept.
func TestWebUIShowsLAGs(t *testing.T) {
	s, b := serverAndChromium(t, 1280, 900)
	b.openAsAdmin(s)
	s.expect(t, 201, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort3","fpPort4"]}`)
	b.waitFor("document.querySelector('#lags li[data-lag=PortChannel1]') !== null && document.querySelectorAll('#ports [data-lag=PortChannel1]').length === 2", 10*time.Second)
	var title, row string
	b.eval(&title, "document.querySelector('#ports [data-port=fpPort3]').title")
	b.eval(&row, "document.querySelector('#lags li[data-lag=PortChannel1]').textContent")
	if want := "member of PortChannel1"; !strings.Contains(title, want) {
		t.Errorf("fpPort3's label %q lacks %q", title, want)
	}
	if want := "members fpPort3, fpPort4"; !strings.Contains(row, want) {
		t.Errorf("the LAG's row %q lacks %q", row, want)
	}
	b.screenshot(screenshotDir(t), "panel-lag")
	s.expect(t, 200, "DELETE", "/config/LaPortChannel?IntfRef=PortChannel1", "")
	b.waitFor("document.getElementById('lags').hidden && document.querySelectorAll('#ports [data-lag]').length === 0", 10*time.Second)
}
