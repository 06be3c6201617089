from enum import StrEnum


class RetryPolicyClientErrors(StrEnum):
    RETRY = "retry"
    STOP = "stop"

    def __str__(self) -> str:
        return str(self.value)
