package api

import (
	"context"
	"io"
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"
)

type userKey struct{}

// WithUser records the authenticated user of a request; the authentication
// layer calls it, and every commit and config log entry carries the name.
func WithUser(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, userKey{}, name)
}

// UserName is the authenticated user of a request, "" when there is none
// (unauthenticated local HTTP).
func UserName(ctx context.Context) string {
	name, _ := ctx.Value(userKey{}).(string)
	return name
}

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
