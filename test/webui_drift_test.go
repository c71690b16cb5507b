package test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/model"
)

// TestWebUIShowsTheDrift: the config log's view says whether the running
// configuration is the intent an IntentSource names (an unsigned one from
// the test's HTTP server), and an out-of-band change shows as drift,
// naming the object, without a reload (the feed's DriftState event).
func TestWebUIShowsTheDrift(t *testing.T) {
	doc := fmt.Sprintf(`{"SchemaVersion":%d,"ConfigData":{"Vlan":[{"VlanId":100}]}}`, model.Builtin().SchemaVersion())
	intent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, doc) }))
	t.Cleanup(intent.Close)
	s, b := serverAndChromium(t, 1280, 900)
	b.openAsAdmin(s)
	b.navigate("http://" + s.addr + "/#log")
	b.waitFor("document.getElementById('drift').dataset.drift === 'none'", 20*time.Second)
	s.expect(t, 201, "POST", "/config/IntentSource", fmt.Sprintf(`{"URL":%q,"AllowUnsigned":true,"Interval":3600}`, intent.URL+"/intent.json"))
	b.waitFor("document.getElementById('drift').dataset.drift === 'in-line'", 30*time.Second)
	s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":300}`)
	b.waitFor("document.getElementById('drift').dataset.drift === 'drift'", 20*time.Second)
	var objects string
	b.eval(&objects, "document.getElementById('drift-objects').textContent")
	if !strings.Contains(objects, "extra Vlan VlanId=300") {
		t.Errorf("the drift's objects on the page: %q", objects)
	}
}
