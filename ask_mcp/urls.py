"""URLs of the browser inbox; include them at the site root (the answer URLs sent to clients point here)."""

from __future__ import annotations

from django.urls import path

from ask_mcp.web import account, phone, reach, views

app_name = "ask_mcp"
urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("asks/<uuid:ask_id>/", views.ask_page, name="ask"),
    path("link/<str:token>/", reach.mail_link, name="link"),
    path("settings/", reach.reach_settings, name="settings"),
    path("away/", reach.set_away, name="away"),
    path("settings/email/<str:token>/", account.confirm_email, name="confirm-email"),
    path("inbox/poll/", views.poll, name="poll"),
    path("mine/", views.mine, name="mine"),
    # Fixed for good: installed apps keep these two URLs (docs/answering/phone.md).
    path("manifest.webmanifest", phone.manifest, name="manifest"),
    path("sw.js", phone.service_worker, name="service_worker"),
    path("push/ack/", phone.push_ack, name="push_ack"),
    path("push/answer/", phone.push_answer, name="push_answer"),
    path("asks/<uuid:ask_id>/seen/", phone.ask_seen, name="ask_seen"),
    path("settings/devices/", phone.push_subscribe, name="push_subscribe"),
    path("settings/devices/<int:device_id>/", phone.push_device, name="push_device"),
]
