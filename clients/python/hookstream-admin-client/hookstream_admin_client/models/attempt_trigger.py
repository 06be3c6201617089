from enum import StrEnum


class AttemptTrigger(StrEnum):
    INITIAL = "initial"
    REPLAY = "replay"
    RETRY = "retry"
    TEST = "test"

    def __str__(self) -> str:
        return str(self.value)
