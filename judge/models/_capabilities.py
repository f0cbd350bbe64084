"""What an OpenAI-compatible server really does with the request features the workbench uses.

"OpenAI-compatible" servers differ in exactly the places a structured judge leans on
(documented behaviour, and what was measured here against llama-cpp-python's server):

- **output cap**: llama-cpp-python's server (0.3.x) knows only ``max_tokens`` and silently
  ignores ``max_completion_tokens``, as older llama.cpp ``llama-server`` builds and llamafile
  do; OpenAI's reasoning models refuse ``max_tokens``. vLLM, Ollama and LM Studio accept
  ``max_tokens``.
- **forced tool calls**: a tool named in ``tool_choice`` is honoured by vLLM (guided decoding)
  and llama-cpp-python (a grammar from the tool's schema); ``"required"`` with several tools is
  ignored by llama-cpp-python (the model answers in prose) and was unsupported in vLLM before
  0.8.3; Ollama ignores ``tool_choice`` altogether.
- **structured output**: ``response_format`` with a JSON schema (vLLM, llama.cpp, Ollama's
  ``format``, LM Studio) constrains the reply where tool forcing is not honoured.
- **images**: a text-only model's chat template fails on list content (llama-cpp-python: HTTP
  500 "can only concatenate str (not "list") to str"); vLLM answers 400 for a model with no
  vision tower.
- **re-asks**: a pydantic-validated server (llama-cpp-python) refuses an assistant message with
  ``"content": null`` beside its ``tool_calls`` (HTTP 500 "Input should be a valid string"),
  although OpenAI documents null there. An empty string is accepted everywhere.

:func:`judge.models.probe_capabilities` measures these with one short call per feature; the
result is kept with the profile (:attr:`ModelProfile.capabilities`) and the client then uses
what the server honours. A profile never probed gets :data:`ASSUMED`: the choices that fail
loudly rather than silently on a server that differs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

OutputCap = Literal["max_tokens", "max_completion_tokens"]
ToolForcing = Literal["required", "wrapped"]


class Capabilities(BaseModel):
    """What one endpoint and model honour (see the module docstring).

    Attributes:
        probed_at: when the probe ran (ISO 8601, UTC); ``""`` for the assumed defaults.
        server: what the server says it is (``owned_by`` of its model, or a header), if anything.
        output_cap: the request field the server applies as the reply's token cap.
        named_tool: a tool forced by name in ``tool_choice`` comes back as that tool's call.
        required_tool: ``tool_choice: "required"`` with several tools yields a tool call.
        json_schema: ``response_format: {"type": "json_schema", …}`` constrains the reply.
        images: the model accepts image parts in a user message.
        null_content: an assistant message with ``content: null`` and ``tool_calls`` is accepted.
        notes: what the probe saw, in words, one line per feature that did not work.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    probed_at: str = ""
    server: str | None = None
    output_cap: OutputCap = "max_tokens"
    named_tool: bool = True
    required_tool: bool = True
    json_schema: bool = False
    images: bool = True
    null_content: bool = False
    notes: tuple[str, ...] = Field(default_factory=tuple)

    @property
    def probed(self) -> bool:
        return bool(self.probed_at)

    @property
    def tool_forcing(self) -> ToolForcing:
        """How to get one call out of several tools: ``tool_choice: "required"`` where it is
        honoured, else one tool forced by name that wraps the choice (``{tool, arguments}``)."""
        return "required" if self.required_tool else "wrapped"

    def summary(self) -> str:
        """One line a lab user can read (self-test, the profile dialog)."""
        if not self.probed:
            return "not probed (assumed: max_tokens cap, tool_choice honoured, images accepted)"
        parts = [
            f"cap by {self.output_cap}",
            "tool by name" if self.named_tool else "no forced tool",
            "tool_choice required" if self.required_tool else "required ignored (wrapped)",
            "json_schema" if self.json_schema else "no json_schema",
            "images" if self.images else "text only",
        ]
        return ", ".join(parts)


ASSUMED = Capabilities()
"""Before a probe: ``max_tokens`` (every local server applies it; a server that refuses it says
so with a 400 naming the field, and the client switches), no ``content: null`` in re-asks, and
tool forcing and images assumed to work (a server that ignores them is caught by the reply
check, and by the probe once it runs)."""
