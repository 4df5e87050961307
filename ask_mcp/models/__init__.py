"""Database models of ask_mcp: asks and their history, sessions, tokens, tasks, and the modules beside them; rows, not decisions.

Here: every question put to a person (Ask, AskEvent), initialize-era sessions, bearer tokens
and tasks. Beside it, each a concept of its own: webhooks (:mod:`ask_mcp.models.webhooks`), how
people are reached (:mod:`ask_mcp.models.reach`: choices, escalations, devices, every delivery),
people's signed-in browsers and confirmed addresses (:mod:`ask_mcp.models.people`), decisions
held for an undo window (:mod:`ask_mcp.models.held`) and asks refused by a limit
(:mod:`ask_mcp.models.limits`). Deciding an ask is :mod:`ask_mcp.records`'; how a principal or
a team is written is :mod:`ask_mcp.team.auth`'s.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any, Final

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, Group, Permission
from django.db import models
from django.db.models import Exists, Q
from django.db.models.functions import Cast

from ask_mcp.protocol.plain import plain_title
from ask_mcp.server.errors import REASON_LIMIT
from ask_mcp.server.ids import new_ask_id

if TYPE_CHECKING:
    from django.contrib.auth.models import User


ANSWER_EVERY_ASK: Final = "ask_mcp.answer_every_ask"
"""The permission to see and answer every ask in the inbox, whoever it is addressed to
(superusers hold it; grant it to a user or a group in the admin)."""
ASK_PEOPLE: Final = ("answered_by", "asked_by")
"""The people an ask names (who decided it, whom it is addressed to): what showing it reads."""
ASK_REACH: Final = ("reach__escalated_team", "reach__escalated_user")
"""Whom an ask was escalated to: what its card reads besides ASK_PEOPLE."""


DETACHED_HELP: Final = "When the last call waiting on it left (DETACHED_GRACE_SECONDS apply)."
COLLECTED_HELP: Final = "When a call took the decision to its agent."


class AskQuerySet(models.QuerySet["Ask"]):
    def with_people(self) -> AskQuerySet:
        """Asks with ASK_PEOPLE read in the same query, as the inbox, its pages and the admin
        show them (each would otherwise cost a query per ask)."""
        return self.select_related(*ASK_PEOPLE, *ASK_REACH)

    def pending(self) -> AskQuerySet:
        return self.filter(status=Ask.Status.PENDING)

    def in_browser(self) -> AskQuerySet:
        """Asks a person answers in a browser (the client route answers in the client)."""
        return self.filter(route__in=(Ask.Route.BROWSER, Ask.Route.URL))

    def visible_to(self, user: User | AnonymousUser) -> AskQuerySet:
        """Asks `user` may see and answer: those with ANSWER_EVERY_ASK see all; others those
        addressed to them or their groups."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:
            return self
        groups = Group.objects.filter(user=user)
        # The permission as SQL, granted to the user or one of their groups: the inbox builds
        # this query in async views, where `has_perm` (a query of its own) may not run.
        app_label, codename = ANSWER_EVERY_ASK.split(".")
        granted = Permission.objects.filter(
            Q(user=user) | Q(group__user=user),
            content_type__app_label=app_label,
            codename=codename,
        )
        return self.filter(
            Q(asked_by=user)
            | Q(team__in=groups)
            | Q(reach__escalated_user=user)
            | Q(reach__escalated_team__in=groups)
            | Q(Exists(granted))
        )

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

    id = models.UUIDField(primary_key=True, default=new_ask_id, editable=False)
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
        db_index=False,  # indexed where set (Meta): most asks have no team
    )
    route = models.CharField(max_length=16, choices=Route.choices)
    people_only = models.BooleanField(
        default=False,
        help_text="Asked with a token whose asks go to people only: the client's form was not "
        "offered, whatever the client declared.",
    )
    in_task = models.BooleanField(
        default=False,
        help_text="Asked by a task of the MCP Tasks extension: no call holds it, the client "
        "polls tasks/get for its answer.",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    answer = models.JSONField(null=True, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="asks_answered",
        db_index=False,  # indexed where set (Meta): only browser answers have one
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()
    worker = models.CharField(
        max_length=200, blank=True, help_text="Channel name of the worker process holding the call."
    )
    call_id = models.CharField(
        max_length=64, blank=True, help_text="The parked call, for questions sent to the client."
    )
    # Durable asks (docs/agents/nothing-lost.md): who waits on the ask, and who took its decision.
    detached_at = models.DateTimeField(null=True, blank=True, help_text=DETACHED_HELP)
    attach_key = models.CharField(max_length=64, blank=True, default="", editable=False)
    """Principal, tool and arguments (or the call's idempotency key) digested: a call asking
    the same attaches to this ask while it waits or its answer is uncollected."""
    collected_at = models.DateTimeField(null=True, blank=True, help_text=COLLECTED_HELP)
    collected_by = models.CharField(max_length=200, blank=True, help_text="The call that took it.")
    # The credential the asking call came with, by kind and id (none for anonymous or stdio):
    # no foreign key, so a new kind of credential needs only its own table (a token's id is
    # its ApiToken's primary key; deleting the token leaves the id, which then names nothing).
    credential_kind = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="Which kind (ask_mcp.server.identity.CredentialKind).",
    )
    credential_id = models.CharField(
        max_length=64, blank=True, default="", help_text="Its id within its kind."
    )
    credential = models.CharField(
        max_length=200, blank=True, default="", help_text="The token the client asked with."
    )
    client_version = models.CharField(max_length=100, blank=True, default="")
    session = models.CharField(
        max_length=64, blank=True, default="", help_text="The initialize-era session, if any."
    )
    reason = models.CharField(
        "staff's reason",
        max_length=REASON_LIMIT,
        blank=True,
        default="",
        db_default="",  # the recorder's own INSERT (records.sql) names every column anyway
        help_text="Why staff cancelled or expired it; the waiting model is told.",
    )

    objects = AskQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        # Being staff (the admin) no longer means seeing every ask: a staff member given only
        # webhook permissions read and answered private questions.
        permissions = [("answer_every_ask", "Can see and answer every ask in the inbox")]
        # Each index costs every insert; the sparse foreign keys are indexed only where set
        # (what deleting a user or a group looks up), which most rows are not.
        constraints = [
            # Two identical calls at once share one ask: the second's insert loses here.
            models.UniqueConstraint(
                fields=["attach_key"],
                name="ask_attach_key",
                condition=~models.Q(attach_key=""),
            ),
        ]
        indexes = [
            models.Index(fields=["status", "created"], name="ask_status_created"),
            # What retention reads (ended asks by expiry); asks are written pending, so the
            # insert on the hot path does not touch it, only the decision's update does.
            models.Index(
                fields=["expires_at"],
                name="ask_ended_expires",
                condition=~models.Q(status="pending"),
            ),
            models.Index(fields=["team"], name="ask_team", condition=models.Q(team__isnull=False)),
            models.Index(
                fields=["answered_by"],
                name="ask_answered_by",
                condition=models.Q(answered_by__isnull=False),
            ),
            # What the flood limits count when an ask is created (ask_mcp.records.limits): one
            # principal's pending asks, and its asks of the last minute.
            models.Index(
                fields=["principal"],
                name="ask_principal_pending",
                condition=models.Q(status="pending") & ~models.Q(principal=""),
            ),
            models.Index(
                fields=["principal", "created"],
                name="ask_principal_created",
                condition=~models.Q(principal=""),
            ),
            # The asks of one credential (a token's rates on the dashboard), where there is one.
            models.Index(
                fields=["credential_kind", "credential_id"],
                name="ask_credential",
                condition=~models.Q(credential_kind=""),
            ),
        ]

    def __str__(self) -> str:
        # Plain words, as the inbox titles it: the admin list and the dashboard showed the raw
        # Markdown ("## Migration plan for `orders`").
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        first = plain_title(first) if first else ""
        return first if len(first) <= 80 else first[:79] + "…"

    @property
    def is_pending(self) -> bool:
        return self.status == Ask.Status.PENDING

    @property
    def is_decided(self) -> bool:
        """A person (or an admin) decided it: accepted, declined or cancelled."""
        return self.status in DECIDED

    @property
    def awaits_collection(self) -> bool:
        """Decided, and no call has taken the decision to its agent yet."""
        return self.is_decided and self.collected_at is None

    @property
    def agent_waiting(self) -> bool:
        """Pending, and a call is waiting on it (none since its connection dropped or its
        worker stopped)."""
        return self.is_pending and bool(self.worker) and self.detached_at is None

    @property
    def awaits_browser_answer(self) -> bool:
        """Pending, and answered in a browser (the client route answers in the client)."""
        return self.status == Ask.Status.PENDING and self.route != Ask.Route.CLIENT

    async def ais_visible_to(self, user: User | AnonymousUser) -> bool:
        """AskQuerySet.visible_to's rule for one ask in hand. Most asks are addressed to the
        person opening them, which needs no query; only a team's ask asks the database."""
        if not user.is_authenticated:
            return False
        if self.asked_by_id is not None and self.asked_by_id == user.pk:
            return True
        if await user.ahas_perm(ANSWER_EVERY_ASK):
            return True
        if self.team_id is not None and await user.groups.filter(pk=self.team_id).aexists():
            return True
        # Offered to someone else after it waited (a team's escalation): one more query.
        return await AskReach.objects.filter(
            Q(escalated_user=user) | Q(escalated_team__in=Group.objects.filter(user=user)),
            ask_id=self.pk,
        ).aexists()

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


DECIDED: Final = frozenset({Ask.Status.ACCEPTED, Ask.Status.DECLINED, Ask.Status.CANCELLED})
"""Statuses a person (or an admin) decided; the decision then waits to be collected by a call."""


class AskEvent(models.Model):
    """One step in an ask's history: who did what to it, by which route, and when."""

    class Kind(models.TextChoices):
        CREATED = "created"
        SHOWN = "shown"
        ANSWERED = "answered"
        DECLINED = "declined"
        CANCELLED = "cancelled"
        EXPIRED = "expired"
        WITHDRAWN = "withdrawn"
        PURGED = "purged", "answer deleted (retention)"
        DELIVERED = "delivered", "decision delivered to the agent"
        DETACHED = "detached", "the agent's call left"
        ATTACHED = "attached", "an agent's call attached"
        ESCALATED = "escalated"
        REACHED = "reached", "notification reached a device"
        SEEN = "seen", "seen by a person"

    # Looked up through askevent_ask_at, whose first column it is: no index of its own.
    ask = models.ForeignKey(Ask, on_delete=models.CASCADE, related_name="events", db_index=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ask_events",
        help_text="The person who acted, when a person did.",
        db_index=False,  # indexed where set (Meta): the client and the server act unnamed
    )
    actor_label = models.CharField(
        max_length=200,
        blank=True,
        help_text="Who acted otherwise: the client, the server, an admin.",
    )
    route = models.CharField(max_length=16, blank=True)

    class Meta:
        ordering = ["at", "pk"]
        indexes = [
            models.Index(fields=["ask", "at"], name="askevent_ask_at"),
            models.Index(
                fields=["actor"], name="askevent_actor", condition=models.Q(actor__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor or self.actor_label or 'the server'}"


def storable(value: Any) -> Any:
    """`value` (text or JSON) with every NUL character replaced by U+FFFD, and every number that
    is not finite by null.

    NUL is valid in JSON and in Python strings, but PostgreSQL's text and jsonb cannot hold it:
    one client's "\\u0000" made the whole batch of asks it was written with fail. Infinity and NaN
    are not JSON at all: every way in refuses them (a `1e999` answer was recorded by no write
    while its ask stayed pending); this is the last line, so a Python caller's float('inf') costs
    that one value, not the batch.
    """
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [storable(item) for item in value]
    return value


def event_for_status(status: str) -> AskEvent.Kind:
    """The history event an ask's final status stands for."""
    return {
        Ask.Status.ACCEPTED: AskEvent.Kind.ANSWERED,
        Ask.Status.DECLINED: AskEvent.Kind.DECLINED,
        Ask.Status.CANCELLED: AskEvent.Kind.CANCELLED,
        Ask.Status.EXPIRED: AskEvent.Kind.EXPIRED,
        Ask.Status.WITHDRAWN: AskEvent.Kind.WITHDRAWN,
    }[Ask.Status(status)]


class LegacySessionRecord(models.Model):
    """An initialize-era (2025-06-18 / 2025-11-25) MCP session, visible to every worker process."""

    id = models.CharField(primary_key=True, max_length=64)
    protocol_version = models.CharField(max_length=20)
    capabilities = models.JSONField(default=dict)
    client_info = models.JSONField(null=True, blank=True)
    principal = models.CharField(max_length=255, blank=True, default="")
    # The credential it was opened with, as an ask keeps it: revoking a token ends its sessions
    # (and their standalone streams), which the principal alone could not tell apart. Defaults
    # in the database too, so a worker not yet upgraded still opens sessions (a rolling deploy).
    credential_kind = models.CharField(max_length=16, blank=True, default="", db_default="")
    credential_id = models.CharField(max_length=64, blank=True, default="", db_default="")
    log_level = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "legacy MCP session"
        indexes = [
            models.Index(fields=["ended_at", "last_seen_at"]),
            # A principal's sessions, idle longest last: what SESSIONS_PER_PRINCIPAL counts.
            models.Index(
                fields=["principal", "last_seen_at"],
                name="session_principal_seen",
                condition=~models.Q(principal=""),
            ),
            # A credential's sessions: what revoking it ends.
            models.Index(
                fields=["credential_kind", "credential_id"],
                name="session_credential",
                condition=~models.Q(credential_kind=""),
            ),
        ]

    def __str__(self) -> str:
        name = (self.client_info or {}).get("name", "client")
        return f"{name} ({self.protocol_version}) {self.id[:8]}…"


class ApiToken(models.Model):
    """A bearer token for /mcp. Only its SHA-256 is stored; the token itself is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_tokens"
    )
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for.")
    team = models.ForeignKey(
        "auth.Group",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="mcp_tokens",
        help_text="Questions asked with this token also go to this team.",
    )
    people_only = models.BooleanField(
        "asks go to people only",
        default=False,
        help_text="Every question asked with this token goes to people in the inbox, never to "
        "the client's own form: the agent holding the token cannot answer its own asks "
        "(approvals). Takes effect in every worker within 10 seconds.",
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        max_length=12, editable=False, help_text="Start of the token, to recognise it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "MCP token"

    def __str__(self) -> str:
        label = f" ({self.name})" if self.name else ""
        return f"{self.prefix}…{label}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


def revoked_tokens() -> models.QuerySet[Any, Any]:
    """The ids, as an ask names its credential (text), of the tokens revoked or whose user was
    deactivated: what no longer opens /mcp, and whose pending asks are withdrawn."""
    return (
        ApiToken.objects.filter(Q(revoked_at__isnull=False) | Q(user__is_active=False))
        .annotate(key=Cast("pk", models.CharField()))
        .values("key")
    )


class Task(models.Model):
    """A task of the MCP Tasks extension (ask_mcp.server.eras.tasks); `state` holds the rest of it."""

    id = models.CharField(primary_key=True, max_length=64, editable=False)
    principal = models.CharField(max_length=200, blank=True, db_index=True)
    tool = models.CharField(max_length=128)
    status = models.CharField(max_length=16)
    created = models.DateTimeField()
    updated = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True, help_text="Purged after this.")
    ask_id = models.UUIDField(null=True, blank=True, db_index=True)
    state = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"task {self.id[:8]} of {self.tool} ({self.status})"


# Webhooks, how people are reached, their browsers and email changes, decisions held for an undo
# window and asks refused by a limit live in their own modules; imported here so Django registers them
# with the app (last: they refer to the models above).
from ask_mcp.models.held import HeldDecision  # noqa: E402
from ask_mcp.models.limits import RefusedAsks  # noqa: E402
from ask_mcp.models.people import BrowserSession, EmailChange  # noqa: E402
from ask_mcp.models.reach import (  # noqa: E402
    AskReach,
    Delivery,
    Escalation,
    PushDevice,
    ReachPreference,
)
from ask_mcp.models.webhooks import Webhook, WebhookDelivery, new_webhook_secret  # noqa: E402

__all__ = [
    "ANSWER_EVERY_ASK",
    "ASK_PEOPLE",
    "DECIDED",
    "ApiToken",
    "Ask",
    "AskEvent",
    "AskQuerySet",
    "AskReach",
    "BrowserSession",
    "Delivery",
    "EmailChange",
    "Escalation",
    "HeldDecision",
    "LegacySessionRecord",
    "PushDevice",
    "ReachPreference",
    "RefusedAsks",
    "Task",
    "Webhook",
    "WebhookDelivery",
    "event_for_status",
    "new_webhook_secret",
    "revoked_tokens",
    "storable",
]
