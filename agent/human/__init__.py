"""A person is an agent too: one ACPC seat whose decisions come from a person.

:mod:`agent.human.seat` holds the seat (an :mod:`agent.client` connection whose
``decide`` hook waits for the person) and the table it shows; :mod:`agent.human.web`
serves it to a browser over a WebSocket, :mod:`agent.human.tui` to a terminal.
Both frontends read the same table and submit through the same checks, so the
rules the person meets are exactly those of :mod:`poker.state`.
"""
