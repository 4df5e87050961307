"""Staff's reason for cancelling or expiring an ask, as the admin's confirmation pages ask for it; decides nothing.

The reason is model-visible text typed by staff: the field stops at REASON_LIMIT characters
(the decision cuts it to one line of that length again, whoever calls it), and every page
shows it as escaped text.
"""

from __future__ import annotations

from django import forms

from ask_mcp.server.errors import REASON_LIMIT


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
