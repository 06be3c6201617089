from enum import StrEnum


class OperatorSearchDeliveriesErrorCategory(StrEnum):
    BLOCKED_DESTINATION = "blocked_destination"
    CONNECTION_REFUSED = "connection_refused"
    CONNECTION_RESET = "connection_reset"
    DNS = "dns"
    ENDPOINT_DISABLED = "endpoint_disabled"
    HTTP_STATUS = "http_status"
    INTERNAL = "internal"
    INVALID_RESPONSE = "invalid_response"
    REDIRECT = "redirect"
    TENANT_MISMATCH = "tenant_mismatch"
    TIMEOUT = "timeout"
    TLS = "tls"

    def __str__(self) -> str:
        return str(self.value)
