from enum import StrEnum


class ListDeliveriesState(StrEnum):
    FAILED = "failed"
    PENDING = "pending"
    RETRYING = "retrying"
    SKIPPED = "skipped"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
