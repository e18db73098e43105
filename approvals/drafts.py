"""The shape of what the twin may draft for the owner's approval, and its strict parsing.

A draft is the arguments of a high-risk tool call. Its pydantic model is the one definition of
the draft: the tool's JSON schema is generated from it (``chat.agent.tools``), the model's
arguments are parsed by it, and an owner's edit is judged by it again before it is approved.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, ValidationError

CONTACT_TOOL = "draft_contact_message"


class StrictArgs(BaseModel):
    """Tool arguments: every field required (``None`` where allowed), nothing extra, no coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


# An address the owner can reply to: one @, a dotted domain, no spaces (RFC 5321's lengths).
# Not every address RFC 5322 allows, but never a name or a sentence ("Anna de Vries").
EMAIL_PATTERN = r"^[^@\s]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"


class ContactArgs(StrictArgs):
    visitor_name: str | None = Field(min_length=1, max_length=200, description="The visitor's name, if given.")
    visitor_email: str | None = Field(max_length=254, pattern=EMAIL_PATTERN,
                                      description="The visitor's e-mail address, if given (name@domain.tld).")
    message: str = Field(min_length=1, max_length=4000,
                         description="The message for the owner, in the visitor's words.")


# Each high-risk tool and the shape of its draft.
DRAFTS: dict[str, type[StrictArgs]] = {CONTACT_TOOL: ContactArgs}


def arguments_parse(model: type[StrictArgs], raw: str) -> StrictArgs:
    """Parse a model's JSON arguments; raises ValueError with a message the model can act on."""
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON: {exc.msg}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
        )
        raise ValueError(f"invalid arguments: {problems}") from exc
