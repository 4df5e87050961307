"""The team: who calls the server and who may answer what it asks.

Owns `auth` (bearer tokens, the caller a token names, and the one encoding of the principal and
team strings a caller travels as); the channels that reach people are :mod:`ask_mcp.reach`'s. May
import workers, models, toolkits, server, protocol and conf; never records, the runtime,
transports, the web or above.
"""
