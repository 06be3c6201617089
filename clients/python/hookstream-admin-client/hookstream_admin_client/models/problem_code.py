from enum import StrEnum


class ProblemCode(StrEnum):
    BODY_TOO_LARGE = "body_too_large"
    CONFLICT = "conflict"
    FORBIDDEN = "forbidden"
    GONE = "gone"
    IDEMPOTENCY_KEY_IN_PROGRESS = "idempotency_key_in_progress"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    INTERNAL = "internal"
    INVALID_CURSOR = "invalid_cursor"
    INVALID_REQUEST = "invalid_request"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_FOUND = "not_found"
    QUOTA_EXCEEDED = "quota_exceeded"
    REPLAY_TOO_LARGE = "replay_too_large"
    UNAUTHORIZED = "unauthorized"
    UNAVAILABLE = "unavailable"
    UNSUPPORTED_MEDIA = "unsupported_media"
    URL_REFUSED = "url_refused"
    VALIDATION_FAILED = "validation_failed"

    def __str__(self) -> str:
        return str(self.value)
