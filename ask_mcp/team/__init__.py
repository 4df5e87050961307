"""The team: who calls the server and who may answer what it asks.

Owns `auth` (bearer tokens, the caller a token names, and the one encoding of the principal and
team strings a caller travels as) and `notify` (announcing new questions on webhooks). May import
workers, models, toolkits, server, protocol and conf; never records, the runtime, transports,
the web or above.
"""
