"""What one node of a cluster knows of the others (server/core/cluster.py), sans I/O and with a fake clock: the
fast tier's test of the logic that the cluster tests reach through Redis, PostgreSQL and real nodes."""

from __future__ import annotations

from types import SimpleNamespace

from server.core.clock import Clocks, TimeControl
from server.core.cluster import ClusterView, credit_wait, turn_rooms
from server.core.identity import Holder


def room(name: str, game: str = "connect4") -> dict[str, object]:
    """A room's listing as a node publishes it."""
    return {"name": name, "game": game, "players": [None, None]}


def test_a_nodes_listing_routes_its_rooms_and_tournaments_until_it_is_gone() -> None:
    view = ClusterView("n1")
    assert view.learn("n2", [room("Blue Lake"), room("Cave", "magnetic-cave")], [{"id": "t1", "name": "cup"}])
    assert not view.learn("n2", [room("Blue Lake"), room("Cave", "magnetic-cave")], [{"id": "t1", "name": "cup"}])
    assert view.owner("  blue   LAKE ") == "n2" and view.taken("cave") and not view.taken("Red Lake")
    assert view.events == {"t1": "n2"} and view.tournaments() == [{"id": "t1", "name": "cup"}]
    assert [r["name"] for r in view.listing()] == ["Blue Lake", "Cave"]
    assert [r["name"] for r in view.listing("magnetic-cave")] == ["Cave"]
    assert view.learn("n3", [room("Red Lake")], [])
    assert [r["name"] for r in view.listing()] == ["Blue Lake", "Cave", "Red Lake"]  # node by node

    view.forget("n2")
    assert view.owner("Blue Lake") is None and view.events == {} and view.tournaments() == []
    assert view.owner("Red Lake") == "n3"


def test_own_listings_and_messages_are_ignored() -> None:
    view = ClusterView("n1")
    assert not view.learn("n1", [room("Mine")], [{"id": "t9"}])
    assert not view.update("n1", {"Mine": room("Mine")}, [])
    view.route("Mine", "n1")
    assert view.owner("Mine") is None and view.listing() == [] and view.events == {}


def test_updates_open_and_close_rooms_and_replace_the_tournaments() -> None:
    view = ClusterView("n1")
    view.learn("n2", [room("Blue Lake")], [{"id": "t1"}])
    assert view.update("n2", {"Green Lake": room("Green Lake")}, [{"id": "t2"}])
    assert view.owner("green lake") == "n2" and view.events == {"t2": "n2"}  # t1 is no longer n2's
    assert not view.update("n2", {"Green Lake": room("Green Lake")}, [{"id": "t2"}])  # nothing new
    assert view.update("n2", {"Blue Lake": None}, [{"id": "t2"}])
    assert view.owner("Blue Lake") is None and [r["name"] for r in view.listing()] == ["Green Lake"]


def test_a_route_learned_from_a_message_leads_until_the_owner_is_gone() -> None:
    view = ClusterView("n1")
    view.route("New  Room", "n3")  # n3's move arrived before its listing did
    assert view.owner("new room") == "n3"
    view.learn("n2", [room("New Room")], [])  # a listing says n2, but the message's route comes first
    assert view.owner("New Room") == "n3"
    view.update("n2", {"New Room": None}, [])
    assert view.owner("New Room") == "n3"
    view.forget("n3")
    assert view.owner("New Room") is None
    view.route("Other", "n2")
    view.update("n2", {"Other": None}, [])  # the owner says it closed
    assert view.owner("Other") is None


def test_a_fresh_listing_replaces_the_old_and_says_whether_it_changed() -> None:
    view = ClusterView("n1")
    view.learn("n2", [room("A"), room("B")], [])
    view.house_free["n2"] = 3
    assert view.learn("n2", [room("B")], [])
    assert view.owner("A") is None and view.owner("B") == "n2"
    assert "n2" not in view.house_free  # what it may start comes again with its next word


def test_room_numbers_and_holders() -> None:
    view = ClusterView("n1", numbers=[7, 8])
    assert [view.next_number(), view.next_number(), view.next_number()] == [7, 8, None]
    view.holders["ann"] = Holder.SESSION
    assert view.holder("ann") is Holder.SESSION and view.holder("bob") is Holder.NOBODY


def test_a_waited_announcement_gives_the_mover_its_time_back_never_more_than_its_turn() -> None:
    clocks = Clocks(TimeControl.parse({"per_move": 10}), to_move=0, now=100.0)
    playing = SimpleNamespace(clocks=clocks)
    assert credit_wait(playing, 0.5, now=100.25) == 0.25  # the turn has lasted only 0.25 s
    assert clocks.turn_started == 100.25 and clocks.left(0, 100.25) == 10.0
    assert credit_wait(playing, 0.125, now=101.0) == 0.125
    assert clocks.left(0, 101.0) == 10.0 - 0.625  # of its 1 s on the clock, 0.375 s were given back
    assert credit_wait(playing, -1.0, now=102.0) == 0.0
    clocks.stop(102.0)
    assert credit_wait(playing, 1.0, now=103.0) == 0.0  # no clock running
    assert credit_wait(SimpleNamespace(), 1.0, now=103.0) == 0.0  # a room without clocks


def test_the_rooms_a_batch_tells_a_player_its_turn_in() -> None:
    batch = [(1, {"type": "moved", "room": "A"}), (2, {"type": "chat", "room": "B"}), (3, {"type": "moved"}),
             (4, {"type": "moved", "room": "C"}), (5, {"type": "moved", "room": "A"}),
             (6, {"type": "game_start", "room": "D"}), (7, {"type": "game_over", "room": "E"})]
    assert turn_rooms(batch) == {"A", "C", "D"}  # a game's start waited for the database too
