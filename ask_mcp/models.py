"""The Ask record: every question the server put to a person, whichever way it travelled, and how it ended."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, Group
from django.db import models
from django.db.models import Q

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class AskQuerySet(models.QuerySet["Ask"]):
    def pending(self) -> AskQuerySet:
        return self.filter(status=Ask.Status.PENDING)

    def in_browser(self) -> AskQuerySet:
        """Asks a person answers in a browser (the client route answers in the client)."""
        return self.filter(route__in=(Ask.Route.BROWSER, Ask.Route.URL))

    def visible_to(self, user: User | AnonymousUser) -> AskQuerySet:
        """Asks `user` may see and answer: staff see all; others those addressed to them or their groups."""
        if not user.is_authenticated:
            return self.none()
        if user.is_staff:
            return self
        groups = Group.objects.filter(user=user)
        return self.filter(Q(asked_by=user) | Q(team__in=groups))

    def inbox(self, user: User | AnonymousUser) -> AskQuerySet:
        """What `user`'s inbox lists: pending browser asks they may answer, newest first."""
        return self.pending().in_browser().visible_to(user).order_by("-created")


class Ask(models.Model):
    """One question put to a person: what was asked, by whom, how it travels, how it ended."""

    class Route(models.TextChoices):
        CLIENT = "client", "client form"
        BROWSER = "browser", "browser inbox"
        URL = "url", "URL"

    class Status(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        DECLINED = "declined"
        CANCELLED = "cancelled"
        EXPIRED = "expired"
        WITHDRAWN = "withdrawn"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created = models.DateTimeField()
    message = models.TextField()
    schema = models.JSONField("requested schema")
    tool = models.CharField(max_length=128)
    toolkit = models.CharField(max_length=128, blank=True)
    client_name = models.CharField(max_length=200, blank=True)
    principal = models.CharField(max_length=200, blank=True)
    asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="asks_addressed",
        help_text="The person the question is addressed to (the one the model works for).",
    )
    team = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="asks",
        help_text="The group whose members may answer.",
    )
    route = models.CharField(max_length=16, choices=Route.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    answer = models.JSONField(null=True, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="asks_answered",
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()
    worker = models.CharField(
        max_length=200, blank=True, help_text="Channel name of the worker process holding the call."
    )
    call_id = models.CharField(
        max_length=64, blank=True, help_text="The parked call, for questions sent to the client."
    )

    objects = AskQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["status", "created"], name="ask_status_created")]

    def __str__(self) -> str:
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return first if len(first) <= 80 else first[:79] + "…"

    @property
    def is_pending(self) -> bool:
        return self.status == Ask.Status.PENDING

    def is_overdue(self, now: dt.datetime) -> bool:
        return self.expires_at <= now

    def reply(self) -> dict[str, Any]:
        """The ElicitResult a decided ask stands for (what the waiting call resumes with)."""
        action = {
            Ask.Status.ACCEPTED: "accept",
            Ask.Status.DECLINED: "decline",
            Ask.Status.CANCELLED: "cancel",
        }[Ask.Status(self.status)]
        if action == "accept":
            return {"action": action, "content": self.answer or {}}
        return {"action": action}
