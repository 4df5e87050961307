"""Reaching people where they are: who is told of an ask, on which channel, when, and whether it arrived.

`plan` decides the deliveries of an ask (mail to each person who chose it, every webhook of the
person and the team) for its three moments: asked, a reminder before it expires, an escalation to a
team's fallback; `queue` claims and sends them, once across workers, retrying with backoff;
`background` runs both beside the server; `links` signs the links mail carries. The channels:
`mail` writes the mail; `webhooks` shapes, signs and posts a webhook's body to an address `targets`
vetted (the SSRF guard); `push` encrypts a Web Push to a device and signs it (VAPID), posted the
same way. A push none of a person's devices acknowledges in time is followed by a mail at once
(`plan.fallback_due`), and an ask that ended closes its notifications (`plan.close_ended`). May import the records, the team, the workers, the models and conf; never
the web or a transport.
"""
