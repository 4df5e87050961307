"""The admin's forms: the reason told to a model when an ask is cancelled or expired, a webhook's vetted URL, an escalation's delay.

The reason is model-visible text typed by staff: the field stops at REASON_LIMIT characters
(the decision cuts it to one line of that length again, whoever calls it), and every page
shows it as escaped text. A webhook URL is vetted as the sender vets it
(:mod:`ask_mcp.reach.targets`), so a target the server would refuse is refused at the form.
An escalation waits at least ESCALATION_MIN_SECONDS. Which teams and people a staff member
may pick is :mod:`ask_mcp.admin.reach`'s (it narrows the choices these forms offer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms

from ask_mcp import conf
from ask_mcp.models import Escalation, Webhook
from ask_mcp.reach.targets import TargetRefused, vet
from ask_mcp.server.errors import REASON_LIMIT

if TYPE_CHECKING:  # ModelForm is generic only to the type checker
    WebhookFormBase = forms.ModelForm[Webhook]
    EscalationFormBase = forms.ModelForm[Escalation]
else:
    WebhookFormBase = EscalationFormBase = forms.ModelForm


class ReasonForm(forms.Form):
    """Staff's reason for a cancel or an expire, told to the waiting model with the result.

    Optional: left blank, the model reads the same plain result as a person's cancel or a
    deadline gives (still a complete answer it can act on); a required field would be filled
    with "x" when staff are in a hurry, which tells the model less than nothing. Bulk decisions
    give all their asks the same reason.
    """

    reason = forms.CharField(
        label="Reason for the agent (optional)",
        required=False,
        max_length=REASON_LIMIT,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=(
            f"The waiting model reads this with its result, e.g. “The user cancelled the request: "
            f"the release is called off.” Up to {REASON_LIMIT} characters, one line; say what "
            "the agent should do instead. Left blank, it reads the plain result."
        ),
    )

    @property
    def said(self) -> str:
        """The reason given, once the form is valid ("" when left blank)."""
        return str(self.cleaned_data["reason"])


class WebhookForm(WebhookFormBase):
    """Refuses a URL that resolves to loopback, a private network or a metadata service, and
    any webhook while PUBLIC_URL, the only origin of the link it announces, is unset."""

    class Meta:
        model = Webhook
        fields = ("url", "user", "team", "active")

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        if conf.values().public_url is None:  # its announcements carry a link to the ask
            raise forms.ValidationError(conf.public_url_needed("A webhook"))
        try:
            vet(url, allow_private=conf.values().allow_private_targets)
        except TargetRefused as exc:
            raise forms.ValidationError(str(exc)) from None
        return url


class EscalationForm(EscalationFormBase):
    """Refuses a wait shorter than ESCALATION_MIN_SECONDS, naming the setting.

    A wait of 0.01 minutes offered every ask of a team to the fallback after 0.6 s: the
    fallback, not the team, answered them.
    """

    class Meta:
        model = Escalation
        fields = ("team", "after_minutes", "fallback_team", "fallback_user", "active")

    def clean_after_minutes(self) -> float:
        minutes: float = self.cleaned_data["after_minutes"]
        least = conf.values().escalation_min_seconds
        if minutes * 60 < least:
            raise forms.ValidationError(
                f"{minutes:g} minutes is shorter than ESCALATION_MIN_SECONDS ({least:g} s): "
                f"wait at least {least / 60:g} minutes, or lower that setting."
            )
        return minutes
