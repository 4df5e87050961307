"""URLs of the browser inbox; include them at the site root (the answer URLs sent to clients point here)."""

from __future__ import annotations

from django.urls import path

from ask_mcp.web import account, reach, views

app_name = "ask_mcp"
urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("asks/<uuid:ask_id>/", views.ask_page, name="ask"),
    path("link/<str:token>/", reach.mail_link, name="link"),
    path("settings/", reach.reach_settings, name="settings"),
    path("settings/email/<str:token>/", account.confirm_email, name="confirm-email"),
    path("inbox/poll/", views.poll, name="poll"),
    path("mine/", views.mine, name="mine"),
]
