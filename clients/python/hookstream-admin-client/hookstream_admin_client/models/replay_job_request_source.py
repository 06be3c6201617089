from enum import StrEnum


class ReplayJobRequestSource(StrEnum):
    HISTORY = "history"
    LOG = "log"

    def __str__(self) -> str:
        return str(self.value)
