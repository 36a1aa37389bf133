"""The sans-I/O core: plain objects fed events and the time, returning what to send and what to store.

Nothing here opens a socket, a file or a database, reads a clock or starts a process (``tests/test_package.py``
checks the imports): the I/O edge (``server.io``) moves bytes and time into these objects and carries out what
they return.

``hall``      dispatch of every validated request, the lobby, sessions, rooms and their routing
``room``      seats, turns, clocks and series of one room (``clock``: the clocks)
``identity``  the rule table of names, claims, resume tokens, back-off
``logins``    the hall's login desk: decides every login by the rule table
``house``     what the hall knows of house bots: their names, levels and start requests
``seeks``     the seek desk: plain seeks by settings (``ladder``: the rating ladder, paired by rating)
``env``       ids and wall-clock time, injected
"""
