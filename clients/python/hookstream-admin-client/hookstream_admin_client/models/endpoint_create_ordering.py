from enum import StrEnum


class EndpointCreateOrdering(StrEnum):
    BOUNDED = "bounded"
    NONE = "none"
    STRICT = "strict"

    def __str__(self) -> str:
        return str(self.value)
