"""Reaching people where they are: who is told of an ask, on which channel, when, and whether it arrived.

`plan` decides the deliveries of an ask (mail to each person who chose it, every webhook of the
person and the team) for its three moments: asked, a reminder before it expires, an escalation to a
team's fallback; `queue` claims and sends them, once across workers, retrying with backoff;
`background` runs both beside the server; `links` signs the links mail carries. The channels:
`mail` writes the mail; `webhooks` shapes, signs and posts a webhook's body to an address `targets`
vetted (the SSRF guard). May import the records, the team, the workers, the models and conf; never
the web or a transport.
"""
