package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The API's stable error codes (Error.Code). The server never renames one.
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
	CodeStorageFull       = "storage_full"   // 507: the switch's disk is full; retry once space is freed
	CodeDamagedRecord     = "damaged_record" // 500: the object's stored record is damaged; its message says how to recover
)

// Error is a failure the server reported.
type Error struct {
	Status   int    // HTTP status
	Code     string // one of the Code constants ("" if the body was not the API's error body)
	Message  string // what was wrong and what would be right
	Object   string // the kind involved, if any
	Field    string // the field involved, if any
	ObjectId string // the existing object, on a duplicate
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Is makes errors.Is(err, &client.Error{Code: client.CodeNotFound}) match
// on the code (and on the status, if the target gives one).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return (t.Code == "" || t.Code == e.Code) && (t.Status == 0 || t.Status == e.Status)
}

// IsNotFound reports whether err is the server's 404.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is the server's 409 (a duplicate, a
// reference, a concurrent change).
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

func errorFrom(status int, body []byte) *Error {
	var b struct {
		Result string
		Error  struct {
			Status  int
			Code    string
			Message string
			Object  string
			Field   string
		}
		ObjectId string
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Error.Code == "" {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return &Error{Status: status, Message: msg}
	}
	return &Error{Status: status, Code: b.Error.Code, Message: b.Error.Message, Object: b.Error.Object, Field: b.Error.Field, ObjectId: b.ObjectId}
}
