"""Why a quota or a throttle refused a request: the reasons the metrics count.

Below both the hall's outbox (:mod:`server.core.outbox`, which carries them to the I/O edge) and the desks that
refuse (house bots, tournaments, logins), so that none of them imports another for it.
"""

from __future__ import annotations

from enum import StrEnum


class Refusal(StrEnum):
    """Why a quota or a throttle refused a request (counted in ``plyhall_refusals_total{reason}``)."""

    CONNECTIONS_PER_ADDRESS = "connections_per_address"
    OPENING_PER_ADDRESS = "opening_per_address"
    ROOMS_SERVER = "rooms_server"
    ROOMS_PER_NAME = "rooms_per_name"
    ROOMS_PER_ADDRESS = "rooms_per_address"
    SEEKS_PER_NAME = "seeks_per_name"
    ROOMS_PER_CONNECTION = "rooms_per_connection"
    HOUSE_BUSY = "house_busy"
    HOUSE_PER_NAME = "house_per_name"
    HOUSE_PER_ADDRESS = "house_per_address"
    LADDER_PER_ADDRESS = "ladder_per_address"
    LOGIN_THROTTLED = "login_throttled"
    LOGIN_BUSY = "login_busy"
