"""The records: every ask's row and history, and the decisions taken on them from outside a call.

Owns the recorder (the QuestionObserver writing each ask and how it ended, its SQL walled off in
`sql`), the sweeper (no ask outlives its expiry or its worker), `retention` (what the sweep
deletes, and when at the earliest), `decisions` (a browser answer, an admin's cancel or expire:
one conditional UPDATE, then the holding worker is woken through the relay the caller hands in) and `events` (the inboxes' live events). May import team, workers,
models, toolkits, server, protocol and conf; never the web, the transports, the runtime or above:
whoever needs a relay passes one in.
"""
