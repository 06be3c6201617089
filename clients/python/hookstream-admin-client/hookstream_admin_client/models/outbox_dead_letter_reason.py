from enum import StrEnum


class OutboxDeadLetterReason(StrEnum):
    INVALID_DATA = "invalid_data"
    MALFORMED = "malformed"
    SCHEMA_VERSION = "schema_version"
    TOO_LARGE = "too_large"
    UNKNOWN_TYPE = "unknown_type"

    def __str__(self) -> str:
        return str(self.value)
