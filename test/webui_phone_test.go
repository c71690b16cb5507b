package test

import (
	"testing"
	"time"
)

// TestWebUIOnAPhone: at a phone's size (390x844 CSS pixels, mobile
// emulation) the front panel, the commit history and the config log fit the screen's
// width (nothing scrolls sideways), no word is cut across lines to fit,
// and every port is shown within it. It
// keeps the two screenshots (panel-phone, history-phone).
func TestWebUIOnAPhone(t *testing.T) {
	s, b := serverAndChromium(t, 390, 844)
	shots := screenshotDir(t)
	s.expect(t, 200, "PATCH", "/config/Port?IntfRef=fpPort3", `{"AdminState":"UP","Description":"uplink to the core switch, rack 12"}`)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.123"}`)

	b.openAsAdmin(s)
	b.waitFor(`document.querySelector('#system [data-field="memory"]').textContent !== ''`, 20*time.Second)
	fits := func(view string) {
		t.Helper()
		var got struct {
			Scroll, Inner float64
			Wide          []string
		}
		b.eval(&got, `({Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth,
			Wide: [...document.querySelectorAll('body *')].filter(e => e.offsetParent !== null && e.getBoundingClientRect().right > window.innerWidth + 0.5).slice(0, 10).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)})`)
		if got.Inner != 390 || got.Scroll > got.Inner || len(got.Wide) > 0 {
			t.Errorf("%s at 390 px: the page is %v px wide in a %v px window; wider than the window: %v", view, got.Scroll, got.Inner, got.Wide)
		}
		// Readable: no word of the text shown (a heading, a date, a user,
		// a button's label) is cut across two lines to fit, but one wider
		// than its box.
		var cut []string
		b.eval(&cut, `(() => {
			const cut = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
			for (let n; (n = walk.nextNode());) {
				if (!n.parentElement || n.parentElement.offsetParent === null) continue;
				for (const m of n.data.matchAll(/\S+/g)) {
					const r = document.createRange();
					r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
					const rects = [...r.getClientRects()];
					// A word wider than its box (a long JSON value) has to break.
					const wide = rects.reduce((w, q) => w + q.width, 0) > n.parentElement.clientWidth;
					if (!wide && new Set(rects.map(q => Math.round(q.top))).size > 1) cut.push(m[0]);
				}
			}
			return cut.slice(0, 20);
		})()`)
		if len(cut) > 0 {
			t.Errorf("%s at 390 px: words cut across lines: %q", view, cut)
		}
	}
	fits("front panel")
	var ports struct{ Shown, Within int }
	b.eval(&ports, `(() => { const ps = [...document.querySelectorAll('#ports [data-port]')];
		return {Shown: ps.filter(e => e.offsetWidth > 0 && e.offsetHeight > 0).length,
			Within: ps.filter(e => { const r = e.getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth; }).length}; })()`)
	if ports.Shown != 32 || ports.Within != 32 {
		t.Errorf("at 390 px: %d ports shown, %d within the screen's width, want 32", ports.Shown, ports.Within)
	}
	b.screenshot(shots, "panel-phone")

	b.eval(nil, "location.hash = '#history'")
	b.waitFor("document.querySelectorAll('#revs tbody tr').length >= 2", 20*time.Second)
	b.click("#revs tbody tr button")
	b.waitFor("document.getElementById('diff').textContent !== ''", 20*time.Second)
	fits("commit history")
	b.screenshot(shots, "history-phone")

	b.eval(nil, "location.hash = '#log'")
	b.waitFor("document.querySelectorAll('#logtable tbody tr').length >= 2", 20*time.Second)
	fits("config log")
}
