"""URLs of the browser inbox; include them at the site root (the answer URLs sent to clients point here)."""

from __future__ import annotations

from django.urls import path

from ask_mcp.web import reach, views

app_name = "ask_mcp"
urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("asks/<uuid:ask_id>/", views.ask_page, name="ask"),
    path("link/<str:token>/", reach.mail_link, name="link"),
    path("settings/", reach.reach_settings, name="settings"),
    path("inbox/poll/", views.poll, name="poll"),
    path("mine/", views.mine, name="mine"),
]
