"""Calling a model: the contracts between the judges and a model provider, the OpenAI-compatible
client and its wire format (images as JPEG), model profiles and keys, the spend cap, a scripted
model for tests and offline demos, and what the judge's job kinds share about their clients.

A provider answers one call with exactly one tool call validated against that tool's JSON schema
and reports every call to a recorder as a :class:`storage.RunCall`. The loopback server of the
tests (:mod:`judge.models.loopback`) is imported explicitly: importing this package does not load
it. Nothing here imports the rest of ``judge``.
"""

from judge.models._api import (
    CallFailed,
    CallRecorder,
    FrameImage,
    Message,
    ModelAPI,
    SpendCapReached,
    Tool,
    ToolCall,
    Usage,
    call_record,
)
from judge.models._capabilities import ASSUMED, Capabilities
from judge.models._client import ModelCallFailed, OpenAIModel
from judge.models._images import encode_jpeg
from judge.models._jobs import (
    MakeApi,
    ProfileCap,
    QueueError,
    default_make_api,
    enqueue_batch,
    job_error,
    model_name,
    profile_spend_cap,
    require_profiles,
)
from judge.models._probe import probe_and_save, probe_capabilities
from judge.models._profiles import (
    ModelProfile,
    load_profile,
    resolve_api_key,
    save_profile,
    store_api_key,
)
from judge.models._scripted import Responder, ScriptedModel, SeenCall

__all__ = [
    "ASSUMED",
    "CallFailed",
    "CallRecorder",
    "Capabilities",
    "FrameImage",
    "MakeApi",
    "Message",
    "ModelAPI",
    "ModelCallFailed",
    "ModelProfile",
    "OpenAIModel",
    "ProfileCap",
    "QueueError",
    "Responder",
    "ScriptedModel",
    "SeenCall",
    "SpendCapReached",
    "Tool",
    "ToolCall",
    "Usage",
    "call_record",
    "default_make_api",
    "encode_jpeg",
    "enqueue_batch",
    "job_error",
    "load_profile",
    "model_name",
    "probe_and_save",
    "probe_capabilities",
    "profile_spend_cap",
    "require_profiles",
    "resolve_api_key",
    "save_profile",
    "store_api_key",
]
