"""A loopback OpenAI-compatible endpoint that plays a model: no network, no model weights.

``FakeServer`` is a real HTTP server on 127.0.0.1 following a script of actions (replies,
errors, delays, dropped connections) or a responder; ``body_messages`` reads a request's texts
for one. ``judge.video.wire_responder`` is the responder that plays the video judge with a
scripted judge. Tests, benchmarks and the docs' screenshots use them; so can a lab checking an
install end to end. Import it explicitly: ``import judge`` does not load it.
"""

from judge.models.loopback._server import (
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
from judge.models.loopback._wire import body_messages

__all__ = [
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
    "tool_message",
]
