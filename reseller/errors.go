package reseller

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Error codes, the same strings the admin API uses for the same cases.
const (
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeInvalidRequest   = "invalid_request"
	CodeInvalidCursor    = "invalid_cursor"
	CodeValidation       = "validation_failed"
	CodeConflict         = "conflict"
	CodeTooLarge         = "body_too_large"
	CodeUnsupportedMedia = "unsupported_media"
	CodeInternal         = "internal"
)

// Error is a refusal the caller is told about: bad input, a resource that is not the partner's,
// a state that does not allow the change. Anything else is a fault of the platform.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return "reseller: " + e.Code + ": " + e.Message }

func refuse(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(what string) *Error {
	return refuse(http.StatusNotFound, CodeNotFound, "%s not found", what)
}

func invalidValue(format string, args ...any) *Error {
	return refuse(http.StatusUnprocessableEntity, CodeValidation, format, args...)
}

// notOneOf refuses v, naming field and the values it may take, unless v is one of them.
func notOneOf(field, v string, allowed []string) *Error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return invalidValue("%s: one of %s", field, strings.Join(allowed, ", "))
}

func conflict(format string, args ...any) *Error {
	return refuse(http.StatusConflict, CodeConflict, format, args...)
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	return errors.AsType[*Error](err)
}
