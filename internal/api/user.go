package api

import (
	"context"
	"io"
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// UserName is the authenticated user of a request, "" for the
// unauthenticated local admin.
func UserName(ctx context.Context) string { return auth.FromContext(ctx).Name }

// readLimited reads a request body of at most MaxBody bytes.
func readLimited(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "cannot read the body: %v", err)
	}
	if len(data) > MaxBody {
		return nil, apierr.New(http.StatusRequestEntityTooLarge, apierr.CodeBodyTooLarge, "", "", "the body is larger than %d bytes", MaxBody)
	}
	return data, nil
}

// reversible vets a commit that a confirmation timer may roll back: it may
// not delete an object whose creation needs a secret that swmgr never keeps
// (a User's password), since the rollback could not make it again and would
// keep every write waiting for it. Then allow, if set, has its say.
func reversible(allow func(*model.Kind, backend.Op, string) error) func(*model.Kind, backend.Op, string) error {
	return func(k *model.Kind, op backend.Op, key string) error {
		if op == backend.Delete {
			for _, f := range k.Fields {
				if f.Required && f.Secret == model.Transient {
					return apierr.BadRequest(apierr.CodeInvalidValue, "Commit", "Confirm",
						"Confirm cannot be used for a commit that deletes %s %s: a rollback could not make it again (its %s is never kept); commit the deletion without Confirm", k.Name, key, f.Name)
				}
			}
		}
		if allow != nil {
			return allow(k, op, key)
		}
		return nil
	}
}
