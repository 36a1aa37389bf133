"""The quotas of one server: how many rooms, seats, house bot games and ladder names one address or one name may
hold, and which games are rated (``plyhall serve`` sets each; docs/OPERATING.md lists them)."""

from __future__ import annotations

from dataclasses import dataclass

from .rated import DEFAULT_BUDGET, Network


@dataclass
class Limits:
    """Quotas that keep one address, or one name, from filling the server (docs/OPERATING.md lists each
    with the ``plyhall serve`` flag that sets it; 0 turns a per-address quota off)."""

    max_rooms: int = 5000  # rooms on the server; seeks may open SEEK_RESERVE more, so play goes on
    max_rooms_per_name: int = 10  # open rooms one name has created
    max_rooms_in_one: int = 50  # rooms one session may be in at once
    max_rooms_per_address: int = 50  # open rooms created from one address
    max_seek_games_per_name: int = 5  # rooms opened by seeks one name sits in at once
    max_connections_per_address: int = 200  # WebSocket connections open from one address (the I/O layer's)
    max_opening_per_address: int = 256  # connections of one address whose opening request is not answered yet
    max_house_games_per_address: int = 2  # rooms against house bots one address has open at once
    max_house_games_per_name: int = 1  # ... one name has open at once
    max_ladder_names_per_address: int = 10  # names on the rating ladder (of any game) from one address
    house_idle: float = 180.0  # seconds a person playing a house bot may leave a move unplayed: then it loses
    rated_games_per_address: int = DEFAULT_BUDGET  # rated games a day the names of one address play (server.core.rated)
    rated_networks: tuple[Network, ...] = ()  # networks of many independent people: their addresses link no names
    rated_names: str = "claimed"  # "registered": only names the organiser registered (plyhall names add) are rated

    @property
    def seek_rooms(self) -> int:
        """The room count past which seeks are refused too: ``max_rooms`` plus a reserve, so that rooms
        others created and left idle never stop players who want to play now."""
        return self.max_rooms + max(10, self.max_rooms // 10)
