from enum import StrEnum


class QuotaReachedName(StrEnum):
    ENDPOINTS = "endpoints"
    REPLAYS_PER_MINUTE = "replays_per_minute"
    REPLAY_DELIVERIES = "replay_deliveries"
    REPLAY_JOBS = "replay_jobs"
    TEST_EVENTS_PER_MINUTE = "test_events_per_minute"

    def __str__(self) -> str:
        return str(self.value)
