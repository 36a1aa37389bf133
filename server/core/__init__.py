"""The sans-I/O core: plain objects fed events and the time, returning what to send and what to store.

Nothing here opens a socket, a file or a database, reads a clock or starts a process (``tests/test_package.py``
checks the imports): the I/O edge (``server.io``) moves bytes and time into these objects and carries out what
they return.

``hall``         dispatch of every validated request, and of every event the I/O edge feeds in
``floor``        what the hall holds (sessions, rooms, seats, the lobby's watchers) and the routing of room outboxes
``limits``       the quotas of one server
``room``         the transitions of one room: seats, turns, games of a series (``room_state``: its fields, what it
                 shows and what storage keeps of it; ``room_settings``; ``clock``: the clocks)
``identity``     the rule table of names, claims, resume tokens, back-off
``logins``       the hall's login desk: decides every login by the rule table
``house``        what the hall knows of house bots: their names, levels and start requests
``seeks``        the seek desk: plain seeks by settings (``ladder``: the rating ladder, paired by rating, one pass of
                 its pairing in ``ladder_pass``)
``ladder_desk``  the hall's ladder desk: ladder seeks, the end of a ladder game, its players back on the ladder
``rated_games``  the rated-game desk: which game that ended is rated, and where its ratings go (``rated``: who may
                 move whose rating)
``tournaments``  the tournament desk; ``timers``: the hall's deadlines; ``rooms``: the room registry
``outbox``       what a hall call produced for the I/O edge (``refusals``: the reasons the metrics count)
``env``          ids and wall-clock time, injected
"""
