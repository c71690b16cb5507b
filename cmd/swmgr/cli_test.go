package main

import (
	"strings"
	"testing"
)

// TestCLIRefusesCredentialsInClear: --user's password is never sent over
// plain HTTP to another machine; https and loopback http are fine. No
// connection is made: cliClient only builds the client.
func TestCLIRefusesCredentialsInClear(t *testing.T) {
	for _, tt := range []struct {
		url  string
		fail bool
	}{
		{"http://192.0.2.10:8080", true},
		{"HTTP://switch1.example:8080", true},
		{"http://[2001:db8::1]:8080", true},
		{"https://192.0.2.10", false},
		{"192.0.2.10", false}, // https is assumed
		{"http://127.0.0.1:8080", false},
		{"http://[::1]:8080", false},
		{"http://localhost:8080", false},
	} {
		t.Setenv("SWMGR_PASSWORD", "secret-pw")
		_, _, err := cliClient(cliOptions{url: tt.url, user: "admin"})
		if got := err != nil && strings.Contains(err.Error(), "in clear"); got != tt.fail {
			t.Errorf("--url %s --user admin: err %v; want refused: %v", tt.url, err, tt.fail)
		}
	}
}
