"""Contains all the data models used in inputs/outputs"""

from .api_key import APIKey
from .api_key_create import APIKeyCreate
from .api_key_created import APIKeyCreated
from .api_key_list import APIKeyList
from .attempt import Attempt
from .attempt_trigger import AttemptTrigger
from .auth_type_0 import AuthType0
from .auth_type_0_client_auth_method import AuthType0ClientAuthMethod
from .auth_type_0_type import AuthType0Type
from .basic import Basic
from .client_certificate_request import ClientCertificateRequest
from .client_certificate_type_0 import ClientCertificateType0
from .delivery import Delivery
from .delivery_detail import DeliveryDetail
from .delivery_list import DeliveryList
from .delivery_state import DeliveryState
from .disable import Disable
from .empty import Empty
from .endpoint import Endpoint
from .endpoint_create import EndpointCreate
from .endpoint_create_ordering import EndpointCreateOrdering
from .endpoint_create_schema_version import EndpointCreateSchemaVersion
from .endpoint_create_signature_scheme import EndpointCreateSignatureScheme
from .endpoint_created import EndpointCreated
from .endpoint_headers import EndpointHeaders
from .endpoint_health import EndpointHealth
from .endpoint_health_circuit import EndpointHealthCircuit
from .endpoint_health_order_type_0 import EndpointHealthOrderType0
from .endpoint_list import EndpointList
from .endpoint_ordering import EndpointOrdering
from .endpoint_patch import EndpointPatch
from .endpoint_patch_ordering import EndpointPatchOrdering
from .endpoint_patch_signature_scheme_type_1 import EndpointPatchSignatureSchemeType1
from .endpoint_patch_signature_scheme_type_2_type_1 import EndpointPatchSignatureSchemeType2Type1
from .endpoint_patch_signature_scheme_type_3_type_1 import EndpointPatchSignatureSchemeType3Type1
from .endpoint_signature_scheme import EndpointSignatureScheme
from .endpoint_status import EndpointStatus
from .endpoint_updated import EndpointUpdated
from .envelope import Envelope
from .envelope_data import EnvelopeData
from .event_page import EventPage
from .event_type import EventType
from .event_type_category import EventTypeCategory
from .event_type_example import EventTypeExample
from .event_type_list import EventTypeList
from .event_type_list_envelope_schema import EventTypeListEnvelopeSchema
from .event_type_schema import EventTypeSchema
from .event_type_versions_item import EventTypeVersionsItem
from .event_type_versions_item_example import EventTypeVersionsItemExample
from .event_type_versions_item_schema import EventTypeVersionsItemSchema
from .field_error import FieldError
from .field_error_code import FieldErrorCode
from .get_open_api_response_200 import GetOpenApiResponse200
from .header import Header
from .limits import Limits
from .limits_notes import LimitsNotes
from .list_deliveries_state import ListDeliveriesState
from .list_outbox_dead_letters_reason import ListOutboxDeadLettersReason
from .list_replay_jobs_state import ListReplayJobsState
from .oauth_2 import Oauth2
from .oauth_2_client_auth_method import Oauth2ClientAuthMethod
from .operator_list_deliveries_state import OperatorListDeliveriesState
from .operator_search_deliveries_error_category import OperatorSearchDeliveriesErrorCategory
from .operator_search_deliveries_state import OperatorSearchDeliveriesState
from .outbox_dead_letter import OutboxDeadLetter
from .outbox_dead_letter_list import OutboxDeadLetterList
from .outbox_dead_letter_reason import OutboxDeadLetterReason
from .partner import Partner
from .partner_create import PartnerCreate
from .partner_list import PartnerList
from .problem import Problem
from .problem_code import ProblemCode
from .public_key_list import PublicKeyList
from .quota_limit import QuotaLimit
from .quota_reached import QuotaReached
from .quota_reached_name import QuotaReachedName
from .quotas import Quotas
from .replay_accepted import ReplayAccepted
from .replay_filter import ReplayFilter
from .replay_job import ReplayJob
from .replay_job_accepted import ReplayJobAccepted
from .replay_job_list import ReplayJobList
from .replay_job_request import ReplayJobRequest
from .replay_job_request_source import ReplayJobRequestSource
from .replay_job_source import ReplayJobSource
from .replay_job_state import ReplayJobState
from .request_headers import RequestHeaders
from .retry_limits import RetryLimits
from .retry_limits_bounds import RetryLimitsBounds
from .retry_limits_client_errors import RetryLimitsClientErrors
from .retry_policy import RetryPolicy
from .retry_policy_client_errors import RetryPolicyClientErrors
from .retry_policy_event_types import RetryPolicyEventTypes
from .retry_rule import RetryRule
from .retry_rule_client_errors import RetryRuleClientErrors
from .rotate_request import RotateRequest
from .rotation import Rotation
from .rotation_scheme import RotationScheme
from .search_deliveries_error_category import SearchDeliveriesErrorCategory
from .search_deliveries_state import SearchDeliveriesState
from .secret import Secret
from .signing_key import SigningKey
from .signing_key_scheme import SigningKeyScheme
from .signing_keys import SigningKeys
from .signing_keys_signature_scheme import SigningKeysSignatureScheme
from .subject import Subject
from .test_accepted import TestAccepted

__all__ = (
    "APIKey",
    "APIKeyCreate",
    "APIKeyCreated",
    "APIKeyList",
    "Attempt",
    "AttemptTrigger",
    "AuthType0",
    "AuthType0ClientAuthMethod",
    "AuthType0Type",
    "Basic",
    "ClientCertificateRequest",
    "ClientCertificateType0",
    "Delivery",
    "DeliveryDetail",
    "DeliveryList",
    "DeliveryState",
    "Disable",
    "Empty",
    "Endpoint",
    "EndpointCreate",
    "EndpointCreated",
    "EndpointCreateOrdering",
    "EndpointCreateSchemaVersion",
    "EndpointCreateSignatureScheme",
    "EndpointHeaders",
    "EndpointHealth",
    "EndpointHealthCircuit",
    "EndpointHealthOrderType0",
    "EndpointList",
    "EndpointOrdering",
    "EndpointPatch",
    "EndpointPatchOrdering",
    "EndpointPatchSignatureSchemeType1",
    "EndpointPatchSignatureSchemeType2Type1",
    "EndpointPatchSignatureSchemeType3Type1",
    "EndpointSignatureScheme",
    "EndpointStatus",
    "EndpointUpdated",
    "Envelope",
    "EnvelopeData",
    "EventPage",
    "EventType",
    "EventTypeCategory",
    "EventTypeExample",
    "EventTypeList",
    "EventTypeListEnvelopeSchema",
    "EventTypeSchema",
    "EventTypeVersionsItem",
    "EventTypeVersionsItemExample",
    "EventTypeVersionsItemSchema",
    "FieldError",
    "FieldErrorCode",
    "GetOpenApiResponse200",
    "Header",
    "Limits",
    "LimitsNotes",
    "ListDeliveriesState",
    "ListOutboxDeadLettersReason",
    "ListReplayJobsState",
    "Oauth2",
    "Oauth2ClientAuthMethod",
    "OperatorListDeliveriesState",
    "OperatorSearchDeliveriesErrorCategory",
    "OperatorSearchDeliveriesState",
    "OutboxDeadLetter",
    "OutboxDeadLetterList",
    "OutboxDeadLetterReason",
    "Partner",
    "PartnerCreate",
    "PartnerList",
    "Problem",
    "ProblemCode",
    "PublicKeyList",
    "QuotaLimit",
    "QuotaReached",
    "QuotaReachedName",
    "Quotas",
    "ReplayAccepted",
    "ReplayFilter",
    "ReplayJob",
    "ReplayJobAccepted",
    "ReplayJobList",
    "ReplayJobRequest",
    "ReplayJobRequestSource",
    "ReplayJobSource",
    "ReplayJobState",
    "RequestHeaders",
    "RetryLimits",
    "RetryLimitsBounds",
    "RetryLimitsClientErrors",
    "RetryPolicy",
    "RetryPolicyClientErrors",
    "RetryPolicyEventTypes",
    "RetryRule",
    "RetryRuleClientErrors",
    "RotateRequest",
    "Rotation",
    "RotationScheme",
    "SearchDeliveriesErrorCategory",
    "SearchDeliveriesState",
    "Secret",
    "SigningKey",
    "SigningKeys",
    "SigningKeyScheme",
    "SigningKeysSignatureScheme",
    "Subject",
    "TestAccepted",
)
