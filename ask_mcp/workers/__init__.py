"""The workers: what one server process shares with the others, over the Channels layer.

Owns `relay` (each worker's mailbox: forwarded MRTR rounds, answers and expiries settled in the
worker holding the call), `sessions` (initialize-era sessions any worker can serve) and `loops`
(one background task per event loop). May import models, toolkits, server, protocol and conf;
never team, records, the runtime, transports, the web or above.
"""
