package engine

import "testing"

func TestIfMatchAllows(t *testing.T) {
	for _, tc := range []struct {
		header    string
		match, ok bool
	}{
		{`"5"`, true, true},
		{`"4"`, false, true},
		{`*`, true, true},
		{`"4", "5"`, true, true},
		{`"4","5"`, true, true},
		{`"5" , "6"`, true, true},
		{`"3", "4"`, false, true},
		{`, "5",`, true, true},
		{`W/"5"`, false, true}, // If-Match uses the strong comparison
		{`W/"4", "5"`, true, true},
		{`5`, false, false},
		{`"5`, false, false},
		{`"5" "6"`, false, false},
		{`"5";x`, false, false},
		{`W/5`, false, false},
		{`,`, false, false},
	} {
		match, ok := ifMatchAllows(tc.header, `"5"`)
		if match != tc.match || ok != tc.ok {
			t.Errorf("ifMatchAllows(%q) = %v, %v; want %v, %v", tc.header, match, ok, tc.match, tc.ok)
		}
	}
}
