"""A loopback OpenAI-compatible endpoint that plays a judge: no network, no model weights.

``FakeServer`` is a real HTTP server on 127.0.0.1 following a script of actions (replies,
errors, delays, dropped connections); ``wire_responder`` answers the judge's requests with a
scripted judge. Tests, benchmarks and the docs' screenshots use them; so can a lab checking an
install end to end. Import it explicitly: ``import judge`` does not load it.
"""

from judge.loopback._server import (
    Action,
    BadArgs,
    Delay,
    Drop,
    FakeServer,
    Malformed,
    ModelNotFound,
    RawJSON,
    RecordedRequest,
    Reply,
    ReplyText,
    Responder,
    Status,
    Unauthorized,
    completion,
    tool_message,
)
from judge.loopback._wire import STAGES, body_messages, stage_of, wire_responder

__all__ = [
    "STAGES",
    "Action",
    "BadArgs",
    "Delay",
    "Drop",
    "FakeServer",
    "Malformed",
    "ModelNotFound",
    "RawJSON",
    "RecordedRequest",
    "Reply",
    "ReplyText",
    "Responder",
    "Status",
    "Unauthorized",
    "body_messages",
    "completion",
    "stage_of",
    "tool_message",
    "wire_responder",
]
