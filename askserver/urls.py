"""URLs of the Django side (the MCP endpoint and the live sockets are routed in asgi.py).

Of Django's account views only those the product uses: signing in and out, and changing one's
password (linked from /settings/; it signs out every other browser). Password reset is not mounted: it was open, unthrottled and
undocumented, and its mailed link followed the request's Host (issue 28); an administrator sets
a forgotten password (`manage.py changepassword`, or the admin).
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from ask_mcp.web import account

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        account.PasswordChange.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("", include("ask_mcp.urls")),
]
