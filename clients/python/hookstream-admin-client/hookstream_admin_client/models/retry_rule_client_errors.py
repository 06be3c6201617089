from enum import StrEnum


class RetryRuleClientErrors(StrEnum):
    RETRY = "retry"
    STOP = "stop"

    def __str__(self) -> str:
        return str(self.value)
