package gnmi

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
)

// grpcError maps one of swmgr's errors to its gRPC status, once, keeping
// swmgr's message: the HTTP status the REST API would answer decides the
// code.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, engine.ErrClosed):
		return status.Error(codes.Unavailable, err.Error())
	}
	e := apierr.From(err)
	return status.Error(codeOf(e), e.Message)
}

// codeOf is the gRPC code of an error the REST API answers with e.Status.
func codeOf(e *apierr.Error) codes.Code {
	if e.Code == apierr.CodeBackend {
		return codes.Aborted // the switch refused or failed the change
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return codes.InvalidArgument
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict, http.StatusPreconditionFailed:
		return codes.FailedPrecondition
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusNotImplemented, http.StatusMethodNotAllowed:
		return codes.Unimplemented
	case http.StatusInsufficientStorage:
		return codes.ResourceExhausted
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return codes.Aborted
	}
	return codes.Internal
}

func apiErr(err error) *apierr.Error { return apierr.From(err) }
