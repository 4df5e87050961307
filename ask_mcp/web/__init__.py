"""The web: the browser inbox, where people see and answer what the models ask.

Owns `views` (the pages, and reading a submitted answer into a decision), `consumers` (the live
socket), `cards` (what an ask looks like), `naming` (how an ask's people and route are named, as the admin names them too), `formfields` (a schema as a form, a form read back
as a reply), `middleware` (a database away is a 503 in words) and `elicit` (the web on_elicit).
May import the runtime (for the process's relay) and everything below it: records, team,
workers, models, server, protocol, conf; never a transport, the facade or above.
"""
