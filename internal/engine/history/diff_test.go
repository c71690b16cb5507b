package history

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// DiffRevisions composes the records between two revisions: an object is
// compared as it was after the one and after the other (created, deleted,
// updated; one changed and changed back is absent), either way round, with
// secrets redacted yet a secret-only change shown.
func TestDiffRevisions(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.MustApply(
		f.Edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "a.example.com", "Password": "pw-one", "Interval": int64(60)}),
		f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}),
	)
	base := f.E.Revision()
	f.MustApply(f.Edit(backend.Update, "ConfigArchiveServer", model.Object{"IpAddr": "a.example.com", "Password": "pw-two", "Interval": int64(60)}))
	secretChanged := f.E.Revision()
	f.MustApply(f.Edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"}))
	madeTwo := f.E.Revision()
	f.MustApply(f.Edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.2"}))
	f.MustApply(f.Edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}))
	last := f.E.Revision()

	for _, tc := range []struct {
		name     string
		from, to uint64
		want     []string // "Kind Op value-in-key"
	}{
		{"forward", base, last, []string{"ConfigArchiveServer update a.example.com", "NtpServer delete 10.0.0.1", "Vrf create red"}},
		{"backward", last, base, []string{"ConfigArchiveServer update a.example.com", "NtpServer create 10.0.0.1", "Vrf delete red"}},
		{"middle", secretChanged, madeTwo, []string{"NtpServer delete 10.0.0.1", "NtpServer create 10.0.0.2"}},
		{"changed and back", madeTwo - 1, madeTwo + 1, nil},
		{"same", madeTwo, madeTwo, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs, err := f.h.DiffRevisions(tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range diffs {
				got = append(got, d.Kind+" "+d.Op+" "+d.Key[strings.Index(d.Key, "=")+1:])
				text := string(d.Before) + string(d.After)
				if strings.Contains(text, "pw-") {
					t.Errorf("a secret in the diff: %s", text)
				}
				if d.Kind == "ConfigArchiveServer" && (!strings.Contains(string(d.Before), model.Redacted) || !strings.Contains(string(d.After), model.Redacted)) {
					t.Errorf("the secret-only change: %s -> %s", d.Before, d.After)
				}
				if (d.Op == "create") != (d.Before == nil) || (d.Op == "delete") != (d.After == nil) {
					t.Errorf("%s with Before %s, After %s", d.Op, d.Before, d.After)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("diff %d..%d = %q, want %q", tc.from, tc.to, got, tc.want)
			}
		})
	}
	for _, bad := range [][2]uint64{{0, last}, {base, last + 1}, {last + 5, base}} {
		var ae *apierr.Error
		if _, err := f.h.DiffRevisions(bad[0], bad[1]); !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
			t.Errorf("diff %d..%d: %v, want a 404", bad[0], bad[1], err)
		}
	}
}
