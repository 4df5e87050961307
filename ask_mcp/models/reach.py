"""How people are reached: each person's choices, each team's escalation, each ask's reminder and escalation, every delivery; rows, not sending.

Planning and sending are :mod:`ask_mcp.reach`'s; these are only its rows, registered with the
app through :mod:`ask_mcp.models`.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models


class ReachPreference(models.Model):
    """How one person wants to be told of asks: their choices on the inbox's settings page.

    No row means the defaults: email on (when they have an address and email is configured).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="reach_preference",
    )
    email_asks = models.BooleanField(
        "email me questions", default=True, help_text="Addressed to me or to one of my teams."
    )
    email_reminders = models.BooleanField(
        "email me a reminder", default=True, help_text="Before a question I was told of expires."
    )
    push = models.BooleanField(
        "notify my devices",
        default=True,
        help_text="Questions, reminders and escalations, on every device I turned on.",
    )
    away_until = models.DateTimeField(
        "away until",
        null=True,
        blank=True,
        help_text="Until then, questions addressed to me go at once to my team's escalation.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"reach preferences of {self.user}"


class PushDevice(models.Model):
    """One device a person turned notifications on for: its push subscription (RFC 8030).

    The endpoint is the push service's URL for this device; `p256dh` and `auth` are the keys the
    browser made (RFC 8291), base64url. A push service answering 404 or 410 for the endpoint
    means the subscription is gone: the row is deleted.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_devices"
    )
    name = models.CharField(max_length=80, help_text="What its person called it.")
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_delivered_at = models.DateTimeField(
        null=True, blank=True, help_text="When its service worker last acknowledged a push."
    )

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.name} of {self.user}"


class Escalation(models.Model):
    """A team's escalation: an ask left unanswered this long is also offered to a fallback."""

    team = models.OneToOneField(
        Group, on_delete=models.CASCADE, primary_key=True, related_name="escalation"
    )
    after_minutes = models.FloatField(
        help_text="Minutes an ask to this team waits unanswered before it is escalated."
    )
    fallback_team = models.ForeignKey(
        Group,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        help_text="Offer it to this team…",
    )
    fallback_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        help_text="…or to this person.",
    )
    active = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(fallback_team__isnull=False, fallback_user__isnull=True)
                | models.Q(fallback_team__isnull=True, fallback_user__isnull=False),
                name="ask_mcp_escalation_team_xor_user",
            ),
            models.CheckConstraint(
                condition=models.Q(after_minutes__gt=0), name="ask_mcp_escalation_after_positive"
            ),
        ]

    def __str__(self) -> str:
        fallback = self.fallback_team or self.fallback_user
        return f"{self.team} → {fallback} after {self.after_minutes:g} min"


class AskReach(models.Model):
    """What reaching people did for one ask: its link's origin, its reminder, its escalation.

    A row of its own, not columns of Ask: the recorder writes asks on the hot path, and an
    ask reaches people only when a person answers it in a browser.
    """

    ask = models.OneToOneField(
        "ask_mcp.Ask", on_delete=models.CASCADE, primary_key=True, related_name="reach"
    )
    link_base = models.CharField(
        max_length=300,
        blank=True,
        help_text="Origin of the links sent (PUBLIC_URL or the request's).",
    )
    reminded_at = models.DateTimeField(null=True, blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True)
    escalated_team = models.ForeignKey(
        Group, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    escalated_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        verbose_name = "reach of an ask"
        verbose_name_plural = "reach of asks"

    def __str__(self) -> str:
        return f"reach of {self.ask_id}"

    @property
    def escalated_to(self) -> str:
        """The fallback it was escalated to, in words ("team backup", "bea"); empty if none."""
        if self.escalated_team is not None:
            return f"team {self.escalated_team.name}"
        if self.escalated_user is not None:
            return self.escalated_user.get_username()
        return ""


class Delivery(models.Model):
    """One notification of one ask to one person or webhook: its state, its tries, its error.

    `key` is unique, so planning the same notification twice (two workers, a retried plan) adds
    nothing; a worker sends a row only after claiming it with a conditional UPDATE.
    """

    class Purpose(models.TextChoices):
        ASKED = "asked", "new question"
        REMINDER = "reminder"
        ESCALATED = "escalated", "escalation"
        # Mail sent at once because no device of the person acknowledged a push within
        # PUSH_FALLBACK_SECONDS: never held back or merged (a digest must skip it).
        FALLBACK = "fallback", "fallback mail (no device acknowledged the push)"
        CLOSED = "closed", "closing push (the ask ended)"
        MORE = "more", "more questions waiting (past the hourly push cap)"

    class Channel(models.TextChoices):
        EMAIL = "email"
        WEBHOOK = "webhook"
        PUSH = "push"

    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        SENT = "sent"
        RETRYING = "retrying"
        FAILED = "failed"
        SKIPPED = "skipped", "not sent (the ask had ended)"

    ask = models.ForeignKey("ask_mcp.Ask", on_delete=models.CASCADE, related_name="deliveries")
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    channel = models.CharField(max_length=16, choices=Channel.choices)
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="ask_deliveries",
    )
    webhook = models.ForeignKey(
        "ask_mcp.Webhook",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="ask_deliveries",
    )
    device = models.ForeignKey(
        PushDevice,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="deliveries",
    )
    address = models.CharField(
        max_length=1000, help_text="The email address, URL or push endpoint it went to."
    )
    key = models.CharField(max_length=200, unique=True, editable=False)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    claim = models.CharField(max_length=64, blank=True, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    immediate = models.BooleanField(
        default=False,
        help_text="Sent at once and alone, never folded into a mail digest (a push fallback, "
        "an urgent mail); reminders are never held either.",
    )
    acked_at = models.DateTimeField(
        null=True, blank=True, help_text="When the device's service worker acknowledged the push."
    )

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.get_purpose_display()} by {self.channel} to {self.address} ({self.state})"
