from enum import StrEnum


class FieldErrorCode(StrEnum):
    URL_REFUSED = "url_refused"
    VALIDATION_FAILED = "validation_failed"

    def __str__(self) -> str:
        return str(self.value)
