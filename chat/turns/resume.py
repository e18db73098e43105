"""Resuming a paused thread with the owner's decision, exactly once, from any process.

Run by the worker (``chat.tasks.approval_resume_task``, enqueued by ``chat.turns.decisions``). Under
the conversation's advisory lock, the thread's checkpoint says whether the decision already
reached it: a resume that runs twice, or after a crash, does nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from approvals import selectors as approval_selectors
from approvals import services as approval_services
from approvals.models import PendingApproval
from chat.agent.context import TurnContext
from chat.agent.recorder import TurnRecorder
from chat.checkpoints import DURABILITY, close_pools
from chat.locks import ConversationBusy, conversation_lock
from chat.models import Conversation
from chat.providers import get_provider
from chat.providers.base import Provider
from chat.turns.run import Emit, compiled_graph, group_emitter, run_recorded
from guards.scrub import scrub_text
from twinsite.db import database_sync_to_async

log = logging.getLogger(__name__)


class ResumeFailed(Exception):
    """The resume did not (yet) take effect; the sweeper retries it."""


class ResumeBusy(ResumeFailed):
    """A turn of the conversation is running; the resume waits for the next sweep."""


def resume_value(approval: PendingApproval) -> dict:
    """What ``request_approval`` receives from ``interrupt()`` on resume (an owner's edit is an
    approval with the edited arguments)."""
    decision = {"approved": "approve", "rejected": "reject", "expired": "expire"}[approval.status]
    return {"approval_id": approval.pk, "decision": decision, "reason": approval.reason,
            "arguments": approval.effective_arguments}


def _waiting_interrupt(snapshot, approval_id: int):
    return next((i for i in snapshot.interrupts
                 if isinstance(i.value, dict) and i.value.get("approval_id") == approval_id), None)


def _resumed(values: dict, approval: PendingApproval) -> bool:
    """The decision reached the thread: the execution call was answered by a tool result."""
    return any(m.get("role") == "tool" and m.get("tool_call_id") == approval.execution_call_id
               for m in values.get("messages") or [])


@dataclass
class _Resume:
    approval: PendingApproval
    graph: CompiledStateGraph
    provider: Provider
    emit: Emit

    @property
    def config(self) -> dict:
        return {"configurable": {"thread_id": str(self.approval.conversation_id)}}


async def approval_resume(*, approval_id: int, emit: Emit | None = None,
                          provider: Provider | None = None) -> str:
    """Resume the approval's thread with the owner's decision, exactly once.

    Returns ``resumed``, ``already_done`` or ``done_without_thread``; raises ResumeFailed when it
    could not take effect (a visitor's turn holds the conversation, or the thread does not wait
    for this approval). Safe to call twice at once or after a crash: under the conversation's
    lock the thread's checkpoint says whether the decision already reached it.
    """
    approval = await database_sync_to_async(approval_selectors.approval_get)(approval_id=approval_id)
    if approval.status == PendingApproval.Status.PENDING:
        raise ResumeFailed(f"approval {approval_id} is not decided")
    conversation_id = approval.conversation_id
    emit = emit or group_emitter(conversation_id)
    provider = provider or get_provider()
    try:
        async with conversation_lock(conversation_id):
            approval = await database_sync_to_async(approval_selectors.approval_get)(approval_id=approval_id)
            if approval.status == PendingApproval.Status.APPROVED:
                # The approved action happens first, before the thread hears of it: idempotent and
                # hash-checked, so a crash or a failing tool inside the run cannot lose it.
                await database_sync_to_async(approval_services.contact_message_create)(
                    conversation_id=conversation_id, call_id=approval.execution_call_id,
                    arguments=approval.final_arguments)
            resume = _Resume(approval, await compiled_graph(), provider, emit)
            return await _resume_locked(resume)
    except ConversationBusy:
        raise ResumeBusy(f"conversation {conversation_id} is busy; retried later") from None


async def _resume_locked(resume: _Resume) -> str:
    approval, graph = resume.approval, resume.graph
    snapshot = await graph.aget_state(resume.config)
    resumed = _resumed(snapshot.values, approval)
    # This resume's own run died after the decision reached the thread (the tool ran, the
    # visitor was not told yet): it is finished below, not taken as done.
    unfinished = resumed and (snapshot.values.get("resolved") or {}).get("approval_id") == approval.pk \
        and any(not task.interrupts for task in snapshot.tasks)
    if approval.resume_status == PendingApproval.Resume.DONE or (resumed and not unfinished):
        await database_sync_to_async(approval_services.approval_resume_finished)(approval_id=approval.pk)
        return "already_done"
    graph_input = await _resume_input(resume, snapshot, unfinished)
    if graph_input is False:
        # The thread never heard of the request (its run died after the row was written) or
        # moved on: the decision is carried out above; only the chat is not told.
        await database_sync_to_async(approval_services.approval_resume_finished)(
            approval_id=approval.pk, note=f"thread {approval.conversation_id} did not wait for this request; "
                                          "the decision was carried out without a follow-up in the chat")
        await resume.emit({"type": "approval", "status": approval.status, "approval_id": approval.pk,
                           "action": approval.tool_name})
        return "done_without_thread"
    try:
        await resume.emit({"type": "approval", "status": approval.status, "approval_id": approval.pk,
                           "action": approval.tool_name})
    except Exception:
        log.debug("approval push failed", exc_info=True)
    lang = await database_sync_to_async(
        Conversation.objects.filter(pk=approval.conversation_id).values_list("language", flat=True).first)()
    await run_recorded(approval.conversation_id, graph_input, resume.emit, resume.provider, user_message=None,
                       lang=lang or "en")
    after = await graph.aget_state(resume.config)
    # A resume must check that it took effect: a wrong id interrupts again, silently.
    if _waiting_interrupt(after, approval.pk) is not None or not _resumed(after.values, approval):
        raise ResumeFailed(f"the decision on approval {approval.pk} did not reach the thread")
    await database_sync_to_async(approval_services.approval_resume_finished)(approval_id=approval.pk)
    return "resumed"


async def _resume_input(resume: _Resume, snapshot, unfinished: bool) -> Command | bool | None:
    """What to run the thread with: the decision for its interrupt, None to finish a run that died
    after the decision reached it, or False when the thread does not wait for this request."""
    approval, graph = resume.approval, resume.graph
    pending = _waiting_interrupt(snapshot, approval.pk)
    if pending is not None:
        return Command(resume={pending.id: resume_value(approval)})
    if unfinished or any(c.get("id") == approval.execution_call_id
                         for c in snapshot.values.get("pending_calls") or []):
        return None  # a resume died after the decision reached the thread: finish that run
    if not any(a["approval_id"] == approval.pk for a in snapshot.values.get("awaiting") or []):
        return False
    # The run that should have paused died before it did: pause again, then resume.
    await graph.aupdate_state(resume.config, {}, as_node="verify")
    provider = resume.provider
    context = TurnContext(provider=provider, recorder=TurnRecorder(provider=provider.name, model=provider.model),
                          conversation_id=str(approval.conversation_id))
    async for _ in graph.astream(None, resume.config, context=context, durability=DURABILITY):
        pass
    pending = _waiting_interrupt(await graph.aget_state(resume.config), approval.pk)
    if pending is None:
        raise ResumeFailed(f"thread {approval.conversation_id} could not be paused again")
    return Command(resume={pending.id: resume_value(approval)})


def approval_resume_sync(*, approval_id: int) -> str:
    """The worker's entry point: one event loop per resume, its pools closed afterwards."""

    async def main() -> str:
        try:
            return await approval_resume(approval_id=approval_id)
        finally:
            await close_pools()

    try:
        return asyncio.run(main())
    except ResumeBusy:
        approval_services.approval_resume_finished(approval_id=approval_id, busy=True)
        return "busy"
    except Exception as exc:
        approval_services.approval_resume_finished(approval_id=approval_id,
                                                   error=scrub_text(f"{type(exc).__name__}: {exc}"))
        raise
