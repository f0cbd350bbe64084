"""Agents under test that live in their own process: protocol ``workbench-agent/1``.

A research policy (PyTorch, JAX, anything) speaks newline-delimited JSON over its stdin/stdout
or a local socket and never imports the workbench; docs/external-agent-protocol.md is the
protocol, docs/examples/external_agent.py a complete client.
"""

from sim.external._agent import ExternalAgent, Recorder, Render, Utterance
from sim.external._factory import external_factory
from sim.external._protocol import PROTOCOL, ExternalAgentError
from sim.external._sink import EndSink
from sim.external._socket import SocketTransport, parse_address
from sim.external._transport import ProcessTransport, Transport, TransportClosedError

__all__ = [
    "PROTOCOL",
    "EndSink",
    "ExternalAgent",
    "ExternalAgentError",
    "ProcessTransport",
    "Recorder",
    "Render",
    "SocketTransport",
    "Transport",
    "TransportClosedError",
    "Utterance",
    "external_factory",
    "parse_address",
]
