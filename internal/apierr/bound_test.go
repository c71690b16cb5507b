package apierr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorsBoundWhatTheyRepeat: an error quoting a huge value or field
// name stays small, and cuts on a character boundary.
func TestErrorsBoundWhatTheyRepeat(t *testing.T) {
	for _, tc := range []struct {
		name          string
		value, field  string
		wantCutFields bool
	}{
		{"short", "10.0.0.1", "IpAddr", false},
		{"huge value", strings.Repeat("a", 1<<20), "IpAddr", false},
		{"huge field name", "x", strings.Repeat("é", 100000), true},
		{"multibyte at the cut", strings.Repeat("€", 5000), "IpAddr", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := BadRequest(CodeInvalidValue, "NtpServer", tc.field, "%s: %q is not an address", tc.field, tc.value)
			if len(e.Message) > MaxMessage+64 || len(e.Field) > MaxName+64 {
				t.Fatalf("message of %d bytes, field of %d", len(e.Message), len(e.Field))
			}
			if !utf8.ValidString(e.Message) || !utf8.ValidString(e.Field) {
				t.Error("cut inside a character")
			}
			long := len(tc.value)+len(tc.field) > MaxMessage
			if long != strings.Contains(e.Message, "bytes in all)") {
				t.Errorf("message %.100q...: cut note present %v, want %v", e.Message, !long, long)
			}
			if tc.wantCutFields != strings.Contains(e.Field, "bytes in all)") {
				t.Errorf("field %.60q...", e.Field)
			}
		})
	}
}
