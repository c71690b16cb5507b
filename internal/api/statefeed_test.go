package api

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEventFeedCarriesStateChanges: a change of state published between
// two commits reaches a change-feed client between them, as `event:
// state` with no id, so that a client resuming with Last-Event-ID goes on
// from its last commit.
func TestEventFeedCarriesStateChanges(t *testing.T) {
	s := newTxnServer(t)
	start := s.eng.Revision()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, _, _ := s.do("POST", "/config/NtpServer", `{"IpAddr":"10.7.0.1"}`); code != 201 {
		t.Fatalf("create: %d", code)
	}
	s.eng.Feed().PublishState([]byte(`{"Kind":"BfdSessionState","Object":{"IpAddr":"10.0.0.2","SessionState":"down"}}`))
	if code, _, _ := s.do("POST", "/config/NtpServer", `{"IpAddr":"10.7.0.2"}`); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var got []string // one line per event: its id (or -) and type
	var event, id string
	sc := bufio.NewScanner(resp.Body)
	for len(got) < 3 && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			event = line[7:]
		case strings.HasPrefix(line, "data: ") && event == "state":
			if !strings.Contains(line, `"SessionState":"down"`) {
				t.Errorf("state data %q", line)
			}
		case line == "" && event != "":
			if id == "" {
				id = "-"
			}
			got = append(got, id+" "+event)
			event, id = "", ""
		}
	}
	want := []string{strconv.FormatUint(start+1, 10) + " commit", "- state", strconv.FormatUint(start+2, 10) + " commit"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events %q, want %q", got, want)
	}
}
