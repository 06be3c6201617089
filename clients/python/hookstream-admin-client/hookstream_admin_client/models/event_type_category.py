from enum import StrEnum


class EventTypeCategory(StrEnum):
    BUSINESS = "business"
    OPERATIONAL = "operational"

    def __str__(self) -> str:
        return str(self.value)
