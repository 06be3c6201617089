from enum import StrEnum


class ReplayJobSource(StrEnum):
    HISTORY = "history"
    LOG = "log"

    def __str__(self) -> str:
        return str(self.value)
