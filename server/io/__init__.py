"""The I/O edge: the only part of the server that touches sockets, processes, the event loop and the clock.

``server``        PlyhallServer: the life cycle, connections, and carrying out what the hall returns
``transport``     every websockets internal the server relies on (and why websockets is pinned)
``http``          the read-only HTTP routes' machinery; ``static_files``: the web page's files
``metrics``       Prometheus metrics; ``gc_policy``: the serving garbage collector
``event_loop``    uvloop or asyncio; ``supervisor``: house bot processes
``host``          what the server's parts (``api``, ``checks``, ``cluster``) see of the server that builds them
``cluster``       a cluster node's Redis link, one module a responsibility (``resp``: its raw hot-path connections)
"""
