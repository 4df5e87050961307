"""How a call waits for a person: the elicitation table, parked calls, slots, settlement, recovery.

The table (:mod:`.table`) parks a 2026-07-28 call's handler (:mod:`.parked`) or holds an
initialize-era call's form on its stream, within the slots of :mod:`.capacity`; an admin's
decision reaches a form that waits on its client through :mod:`.settlement`; a call whose
parked handler is gone is finished from its ask's record by :mod:`.recovery`; observers that
wrap another (the metrics, a test's probe) extend :mod:`.observers`. It knows no era and no
wire: the eras above it call in.
"""
