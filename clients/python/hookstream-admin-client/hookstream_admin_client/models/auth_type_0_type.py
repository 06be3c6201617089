from enum import StrEnum


class AuthType0Type(StrEnum):
    BASIC = "basic"
    HEADER = "header"
    OAUTH2 = "oauth2"

    def __str__(self) -> str:
        return str(self.value)
