from enum import StrEnum


class EndpointPatchOrdering(StrEnum):
    BOUNDED = "bounded"
    NONE = "none"
    STRICT = "strict"

    def __str__(self) -> str:
        return str(self.value)
