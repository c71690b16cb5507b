package model

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

func TestParseQueryString(t *testing.T) {
	nextMarker := func(name string) bool { return name == "NextMarker" }
	for _, tc := range []struct {
		raw  string
		want map[string][]string // nil: refused
	}{
		{"", map[string][]string{}},
		{"dry_run=true", map[string][]string{"dry_run": {"true"}}},
		{"IpAddr=2001%3Adb8%3A%3A1&Count=3", map[string][]string{"IpAddr": {"2001:db8::1"}, "Count": {"3"}}},
		{"a=1&&b=2&", map[string][]string{"a": {"1"}, "b": {"2"}}},
		{"NextMarker=1&NextMarker=2", map[string][]string{"NextMarker": {"1", "2"}}},
		{"Name=a+b%3B", map[string][]string{"Name": {"a b;"}}},
		{"flag", map[string][]string{"flag": {""}}},
		// What net/url silently drops or lets the last one win.
		{"dry_run=true%", nil},
		{"dry_run=true;", nil},
		{"dry_run%=true", nil},
		{"dry_run=true&dry_run=false", nil},
		{"dry_run=true&dry_run=true", nil},
		{"Count=0;", nil},
		{"Count=%zz", nil},
		{"%zz=1", nil},
		{"a=1;b=2", nil},
		{"=1", nil},
		{"Name=%ff", nil},
		{"%ff=1", nil},
	} {
		got, err := ParseQueryString(tc.raw, nextMarker)
		if tc.want == nil {
			var ae *apierr.Error
			if err == nil || !asAPIErr(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != apierr.CodeMalformedQuery {
				t.Errorf("ParseQueryString(%q) = %v, %v; want a 400 malformed_query", tc.raw, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(map[string][]string(got), tc.want) {
			t.Errorf("ParseQueryString(%q) = %v, %v; want %v", tc.raw, got, err, tc.want)
		}
	}
}

func asAPIErr(err error, ae **apierr.Error) bool {
	e, ok := err.(*apierr.Error)
	*ae = e
	return ok
}
