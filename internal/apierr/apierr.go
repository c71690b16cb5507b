// Package apierr defines the one error type that crosses swmgr's layers.
//
// Validation in the model, conflicts in the engine and failures in a backend all
// produce an *Error carrying the HTTP status and a stable machine-readable code,
// so the REST layer never has to guess how to report a failure. Any other error
// that reaches the REST layer is reported as 500, which is always a bug.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"unicode/utf8"
)

// Stable error codes. Clients may switch on them; never rename one.
const (
	CodeMalformedJSON     = "malformed_json"
	CodeMalformedQuery    = "malformed_query"
	CodeWrongType         = "wrong_type"
	CodeUnknownField      = "unknown_field"
	CodeInvalidValue      = "invalid_value"
	CodeMissingField      = "missing_field"
	CodeKeyChange         = "key_change"
	CodeReadOnly          = "read_only_field"
	CodeCreateOnly        = "create_only_field"
	CodeDanglingReference = "dangling_reference"
	CodeBadPaging         = "bad_paging"
	CodeUnknownKind       = "unknown_kind"
	CodeNotFound          = "not_found"
	CodeMethodNotAllowed  = "method_not_allowed"
	CodeDuplicate         = "duplicate"
	CodeReferenced        = "referenced"
	CodeConflict          = "conflict"
	CodePrecondition      = "precondition_failed"
	CodeBodyTooLarge      = "body_too_large"
	CodeUnauthorized      = "unauthorized"
	CodeForbidden         = "forbidden"
	CodeTooManyAttempts   = "too_many_attempts"
	CodeBackend           = "backend_failed"
	CodeNotReady          = "not_ready"
	CodeNotImplemented    = "not_implemented"
	CodeInternal          = "internal"
	CodeStorageFull       = "storage_full"
	CodeDamagedRecord     = "damaged_record"
)

// Error is a failure to report to a client.
type Error struct {
	Status   int    // HTTP status code
	Code     string // one of the Code* constants
	Message  string // what was wrong and what would be right
	Object   string // the kind involved, if any
	Field    string // the field involved, if any
	ObjectId string // the existing object, on a duplicate
}

func (e *Error) Error() string { return e.Message }

// New builds an Error with a formatted message.
// The message, the field and the object are bounded (MaxMessage,
// MaxName), since they may quote what a client sent: a refused 1 MiB value
// must not make a 2 MiB answer (or config log entry).
func New(status int, code, object, field, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Object: bound(object, MaxName), Field: bound(field, MaxName), Message: bound(fmt.Sprintf(format, args...), MaxMessage)}
}

// Bounds on what an error repeats of a request.
const (
	MaxMessage = 4096
	MaxName    = 256
)

// bound cuts s to at most max bytes (on a character boundary), saying how
// long it was.
func bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("...(cut: %d bytes in all)", len(s))
}

// BadRequest is a 400 about one field of one kind.
func BadRequest(code, object, field, format string, args ...any) *Error {
	return New(http.StatusBadRequest, code, object, field, format, args...)
}

// NotFound is a 404.
func NotFound(code, object, format string, args ...any) *Error {
	return New(http.StatusNotFound, code, object, "", format, args...)
}

// Conflict is a 409.
func Conflict(code, object, format string, args ...any) *Error {
	return New(http.StatusConflict, code, object, "", format, args...)
}

// From returns the *Error inside err, or wraps err as an internal error.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		// Not a bug but a full disk: the operator can act on it, and a
		// retry may succeed once space is freed.
		return &Error{Status: http.StatusInsufficientStorage, Code: CodeStorageFull, Message: "the switch's storage is full, so nothing was changed: free space on the file system of the data directory and try again (" + err.Error() + ")"}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error: " + err.Error()}
}

// Body renders the contract's error body: {"Result": "Error: <message>",
// "Error": {Status, Code, Message, Object, Field}, "ObjectId"}.
func (e *Error) Body() []byte {
	type detail struct {
		Status  int
		Code    string
		Message string
		Object  string `json:",omitempty"`
		Field   string `json:",omitempty"`
	}
	body := struct {
		Result   string
		Error    detail
		ObjectId string `json:",omitempty"`
	}{"Error: " + e.Message, detail{e.Status, e.Code, e.Message, e.Object, e.Field}, e.ObjectId}
	b, _ := json.Marshal(body)
	return b
}

// Codes lists every error code, for the OpenAPI document (a test keeps it
// complete).
func Codes() []string {
	return []string{CodeMalformedJSON, CodeMalformedQuery, CodeWrongType, CodeUnknownField, CodeInvalidValue, CodeMissingField, CodeKeyChange,
		CodeReadOnly, CodeCreateOnly, CodeDanglingReference, CodeBadPaging, CodeUnknownKind, CodeNotFound,
		CodeMethodNotAllowed, CodeDuplicate, CodeReferenced, CodeConflict, CodePrecondition, CodeBodyTooLarge,
		CodeUnauthorized, CodeForbidden, CodeTooManyAttempts, CodeBackend, CodeNotReady, CodeNotImplemented, CodeStorageFull, CodeDamagedRecord, CodeInternal}
}
