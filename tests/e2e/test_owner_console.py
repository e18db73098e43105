"""The owner's console in a real browser (issue 22): a contact request decided from the top of
its page on a desktop and on a phone, an unanswered question taught in the admin and answered,
cited, in a visitor's next chat, and a viewer who sees neither the decisions nor the teaching."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.e2e.test_chat_page import ask, launch, login, needs_browser, shot, visitor_page

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def contact_request(browser, server: str, text: str) -> None:
    """A visitor asks the twin to pass a message on; it waits for the owner."""
    visitor, watch = visitor_page(browser, locale="en-GB")
    visitor.goto(server + "/")
    ask(visitor, text)
    visitor.locator(".approval.pending").wait_for(timeout=30_000)
    visitor.locator("#send:not([disabled])").wait_for()
    assert watch.problems == []
    visitor.context.close()


def off_loop(function):
    """An ORM call while Playwright's event loop runs in this thread: made from another thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function).result()


def above_the_fold(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] + box["height"] <= page.viewport_size["height"]


@needs_browser
def test_the_owner_decides_from_the_top_of_the_page_on_a_desktop_and_on_a_phone(server, worker):
    from django.contrib.auth.models import Permission, User
    from playwright.sync_api import sync_playwright

    from approvals.models import ContactMessage, PendingApproval

    User.objects.create_superuser("owner", password="owner-pass-123")
    viewer = User.objects.create_user("viewer", password="viewer-pass-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_pendingapproval"))
    with sync_playwright() as pw:
        browser = launch(pw)
        contact_request(browser, server, "Could you pass a message on? I'm Anna, anna@example.com: I'd like "
                                         "to hire Mira for a two-day workshop in March.")
        contact_request(browser, server, "Please tell Mira that Bram (bram@example.com) wants to talk about "
                                         "a data platform.")
        first, second = off_loop(lambda: list(PendingApproval.objects.order_by("pk")))

        looker = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        login(looker, server, "viewer", "viewer-pass-123", then=f"/admin/approvals/pendingapproval/{first.pk}/change/")
        looker.locator("#decide-at-a-glance").wait_for()  # a viewer reads the request, and cannot decide it
        assert looker.locator("input[name=_approve], input[name=_reject], input[name=_edit]").count() == 0
        looker.keyboard.press("a")  # nor by the keys
        assert off_loop(lambda: PendingApproval.objects.get(pk=first.pk).status) == "pending"
        looker.context.close()

        desktop = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        login(desktop, server, "owner", "owner-pass-123", then="/admin/")
        dashboard = desktop.locator("#owner-dashboard")
        dashboard.wait_for()
        assert desktop.locator("#dash-pending .dash-number").inner_text() == "2"
        assert int(desktop.locator("#dash-turns .dash-number").inner_text()) >= 2
        assert "Europe/Amsterdam" in dashboard.locator("h2").inner_text() or "times in" in dashboard.inner_text()
        shot(desktop, "18-owner-dashboard")
        desktop.click("#dash-pending")  # each figure leads to its list
        desktop.locator("#result_list").wait_for()
        listing = desktop.locator("#result_list").inner_text()
        assert "I'd like to hire Mira" in listing or "hire Mira" in listing  # the message's first line
        desktop.goto(f"{server}/admin/approvals/pendingapproval/{first.pk}/change/")
        panel = desktop.locator("#decide-at-a-glance")
        panel.wait_for()
        assert "anna@example.com" in panel.locator(".glance-who").inner_text()
        assert "two-day workshop" in panel.locator("#glance-message").inner_text()
        assert "hire Mira" in panel.locator(".glance-transcript").inner_text()  # what led to it, beside
        for selector in ("input[name=_approve]", "input[name=_reject]", "#glance-message"):
            assert above_the_fold(desktop, selector), selector
        assert not desktop.locator("fieldset.collapse, details").filter(has_text="interrupt").first.evaluate(
            "e => e.open === true")  # the technical fields are folded away
        shot(desktop, "14-owner-approval-desktop")
        desktop.once("dialog", lambda dialog: dialog.accept())  # "a", then the confirmation
        desktop.keyboard.press("a")
        desktop.locator(".messagelist").wait_for()
        assert "approved" in desktop.locator(".messagelist").inner_text()
        assert desktop.locator("#glance-decided").count() == 1

        phone = browser.new_context(**PHONE).new_page()
        login(phone, server, "owner", "owner-pass-123", then=f"/admin/approvals/pendingapproval/{second.pk}/change/")
        phone.locator("#decide-at-a-glance").wait_for()
        assert above_the_fold(phone, "input[name=_approve]")  # decide without scrolling past the record
        shot(phone, "15-owner-approval-phone")
        phone.keyboard.press("r")  # a rejection needs its reason first: the field gets the focus
        assert phone.evaluate("document.activeElement.id") == "reason"
        phone.fill("#reason", "Not now, thanks.")
        dismissed: list[str] = []
        phone.once("dialog", lambda dialog: (dismissed.append(dialog.message), dialog.dismiss()))
        phone.click("input[name=_reject]")  # asked first; dismissed: nothing is decided
        assert dismissed == ["Reject this request?"]
        assert off_loop(lambda: PendingApproval.objects.get(pk=second.pk).status) == "pending"
        phone.once("dialog", lambda dialog: dialog.accept())
        phone.click("input[name=_reject]")
        phone.locator(".messagelist").wait_for()
        browser.close()
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status, second.reason) == ("approved", "rejected", "Not now, thanks.")
    assert ContactMessage.objects.filter(approval=first).count() == 1


@needs_browser
def test_a_question_taught_in_the_admin_is_answered_cited_in_the_next_chat(server):
    from django.contrib.auth.models import Permission, User
    from playwright.sync_api import sync_playwright

    from chat.models import UnansweredQuestion
    from knowledge.models import TaughtAnswer

    User.objects.create_superuser("owner", password="owner-pass-123")
    viewer = User.objects.create_user("viewer", password="viewer-pass-123", is_staff=True)
    for codename in ("view_unansweredquestion", "view_taughtanswer", "view_pendingapproval"):
        viewer.user_permissions.add(Permission.objects.get(codename=codename))
    question = "Does Mira give workshops at schools?"
    with sync_playwright() as pw:
        browser = launch(pw)
        visitor, watch = visitor_page(browser, locale="en-GB")
        visitor.goto(server + "/")
        ask(visitor, question)
        visitor.locator("#send:not([disabled])").wait_for(timeout=30_000)
        assert "can't find" in visitor.locator(".msg.assistant").last.inner_text()

        staff = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        login(staff, server, "viewer", "viewer-pass-123", then="/admin/chat/unansweredquestion/")
        staff.locator("#question-groups").wait_for()
        assert question in staff.locator("#question-groups").inner_text()
        assert staff.locator("#question-groups a.teach, #question-groups input.dismiss").count() == 0
        staff.context.close()

        owner = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        login(owner, server, "owner", "owner-pass-123", then="/admin/chat/unansweredquestion/")
        group = owner.locator("#question-groups tr.question-group", has_text=question)
        group.wait_for()
        shot(owner, "16-owner-unanswered-groups")
        group.locator("a.teach").click()
        owner.locator("#visitor-wordings").wait_for()
        assert owner.input_value("#id_question") == ""  # nothing a visitor wrote is pre-filled
        owner.locator("#visitor-wordings a.pick").first.click()  # the owner picks the visitor's wording
        owner.locator("#id_answer").wait_for()
        assert owner.input_value("#id_question") == question
        owner.fill("#id_answer", "Yes: once a term she gives a free two-hour workshop on responsible AI "
                                 "for secondary schools.")
        shot(owner, "17-owner-teach-form")
        owner.click("input[name=_save]")
        assert "was added successfully" in owner.locator(".messagelist").inner_text()

        ask(visitor, "Can Mira come to our school for a workshop?")
        answer = visitor.locator(".msg.assistant").last
        answer.locator(".sources a").first.wait_for(timeout=30_000)
        visitor.locator("#send:not([disabled])").wait_for()
        assert "free two-hour workshop" in answer.locator(".text").inner_text()
        assert question in answer.locator(".sources").inner_text()
        watch.settle()
        answer.locator(".sources a").first.click()  # the citation leads to the taught answer's page
        visitor.locator("article.source").wait_for()
        assert "free two-hour workshop" in visitor.locator("article.source").inner_text()
        assert watch.problems == []
        browser.close()
    taught = TaughtAnswer.objects.get()
    assert taught.created_by == "owner"
    assert list(UnansweredQuestion.objects.values_list("answered_by", flat=True)) == [taught.pk]
