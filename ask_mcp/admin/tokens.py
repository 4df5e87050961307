"""The tokens' and sessions' admin: bearer tokens shown once when created, revoked at once; initialize-era sessions.

Revoking a token (the action, or its revoked time set on its page) also withdraws its waiting
asks, with the reason on their cards, ends the calls holding them, cancels its open tasks and
ends its initialize-era sessions and their streams, on every worker.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.cache import patch_cache_control

from ask_mcp import runtime
from ask_mcp.models import (
    ApiToken,
    LegacySessionRecord,
)
from ask_mcp.records.sweeper import REVOKED_REASON, tell, withdraw_revoked
from ask_mcp.records.tasks import end_revoked_tasks
from ask_mcp.team.auth import TOKEN_PREFIX, TOKENS, digest
from ask_mcp.workers.relay import ChannelLayerUnavailable
from ask_mcp.workers.sessions import end_sessions_of_revoked

logger = logging.getLogger("ask_mcp.admin.tokens")

NEW_TOKEN_ATTRIBUTE: Final = "_ask_mcp_new_token"
"""Where save_model leaves a new token, on the request, for response_add to show once."""

if TYPE_CHECKING:  # ModelAdmin is generic only to the type checker
    TokenAdminBase = admin.ModelAdmin[ApiToken]
    SessionAdminBase = admin.ModelAdmin[LegacySessionRecord]
else:
    TokenAdminBase = SessionAdminBase = admin.ModelAdmin


TOKEN_TIMES: Final = ("created_at", "last_used_at", "revoked_at")
"""A token's dates, in its list and on its page (the first two are written by the server)."""


@admin.register(ApiToken)
class ApiTokenAdmin(TokenAdminBase):
    list_display = ("prefix", "name", "user", "team", "people_only", *TOKEN_TIMES)
    list_filter = ("revoked_at", "people_only", "team")
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("prefix", "created_at", "last_used_at")
    fields = ("user", "name", "team", "people_only", "prefix", *TOKEN_TIMES)
    actions = ("revoke",)

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if not change:
            token = TOKEN_PREFIX + secrets.token_urlsafe(32)
            obj.digest = digest(token)
            obj.prefix = token[: len(TOKEN_PREFIX) + 4]
            # Shown by response_add on the answer to this POST; never in a message, whose
            # cookie is signed but readable (and kept by the browser).
            setattr(request, NEW_TOKEN_ATTRIBUTE, token)
        super().save_model(request, obj, form, change)
        TOKENS.forget(obj.digest)  # a revocation or a new team counts at once in this process
        if obj.revoked_at is not None:
            _end_revoked_now()

    def response_add(
        self, request: HttpRequest, obj: ApiToken, post_url_continue: str | None = None
    ) -> HttpResponse:
        """The new token, shown once on this POST's own answer (not cached, not in a cookie)."""
        token = getattr(request, NEW_TOKEN_ATTRIBUTE, None)
        if token is None:
            return super().response_add(request, obj, post_url_continue)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "original": obj}
        response = TemplateResponse(
            request, "admin/ask_mcp/apitoken/created.html", {**context, "token": token}
        )
        patch_cache_control(response, no_store=True, private=True)
        return response

    def delete_model(self, request: HttpRequest, obj: ApiToken) -> None:
        super().delete_model(request, obj)
        TOKENS.forget(obj.digest)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        digests = list(queryset.values_list("digest", flat=True))
        super().delete_queryset(request, queryset)
        for each in digests:
            TOKENS.forget(each)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        active = queryset.filter(revoked_at__isnull=True)
        digests = list(active.values_list("digest", flat=True))
        count = active.update(revoked_at=timezone.now())
        for each in digests:
            TOKENS.forget(each)  # other workers notice within auth.CACHE_SECONDS
        ended = _end_revoked_now()
        self.message_user(request, f"Revoked {count} token(s); withdrew {ended} waiting ask(s).")


def _end_revoked_now() -> int:
    """Withdraw the revoked tokens' waiting asks now and end their calls, tasks and
    initialize-era sessions (with their streams) on every worker.

    Every worker's revocation watch does it within WATCH_SECONDS anyway; doing it here means
    the staff member who revoked sees the cards go at once. A layer that is down is left to
    the watch (the asks are withdrawn either way).
    """
    closed = withdraw_revoked()
    end_revoked_tasks()  # after their asks, as the watch does: the task says why it ended
    try:
        relay = runtime.relay()
        async_to_sync(tell)(closed, relay=relay, reason=REVOKED_REASON)
        async_to_sync(end_sessions_of_revoked)(relay)
    except ChannelLayerUnavailable:
        logger.warning("could not tell the workers of %d revoked ask(s)", len(closed))
    return len(closed)


@admin.register(LegacySessionRecord)
class LegacySessionAdmin(SessionAdminBase):
    list_display = (
        "__str__",
        "protocol_version",
        "principal",
        "created_at",
        "last_seen_at",
        "ended_at",
    )
    list_filter = ("protocol_version", "ended_at")
    readonly_fields = [field.name for field in LegacySessionRecord._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
