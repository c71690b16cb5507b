package api

import (
	"strconv"
	"testing"
)

// The shared header values are the values net/http would have been given:
// a slot reused by another length or revision never answers the old one.
func TestHeaderValues(t *testing.T) {
	var c headerValues
	for _, n := range []int{0, 1, 142, 4095, 4096, 1 << 20, 142, 0} {
		if got := c.contentLength(n); len(got) != 1 || got[0] != strconv.Itoa(n) {
			t.Errorf("contentLength(%d) = %q", n, got)
		}
	}
	for _, rev := range []uint64{1, 3, 1025, 3, 1, 1 + 2*1024, 1 << 40, 1025} {
		want := `"` + strconv.FormatUint(rev, 10) + `"`
		if got := c.etag(rev); len(got) != 1 || got[0] != want {
			t.Errorf("etag(%d) = %q, want %q", rev, got, want)
		}
	}
}
