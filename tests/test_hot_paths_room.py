"""The room's and the hall's shortcuts for a move answer exactly as the general code they stand in for (issue 44).

* Rules: ``ConnectFour.checked_move`` (``"4"`` or ``{"column": N}`` into a column with room, answered straight) against
  ``parse_move`` then ``apply``, on random positions and random things sent as moves; ``format_move`` in each
  convention; each game's ``after_move`` against ``outcome``, ``to_move`` and ``notation`` (and Connect Four's
  against the default).
  Every game's first mover against what its ``first`` option says (a room starts its next game from the option).
* Clocks: a snapshot against each seat's time left, rounded, as it was made before ``both_left``; ``switched`` against
  ``switch`` then ``snapshot``.
* Room and hall: ``Room.move``'s common case, ``Floor._apply``'s routing of a move and ``Hall._move_request`` against
  their general paths (``Room._move``, ``Floor._apply_general``, ``Hall._room_request``), two halls fed the same
  random requests, disconnections and time: every outbox the same, and the rooms the same at the end; each room's
  ``next_deadline`` against its general form; each ``game_start`` (its game's part shared by the members of one
  coordinate convention at a game's start) against the one made for its member alone, in the random run and in a
  room whose opening put stones on the board (Connect Four and Amazons, members in all three conventions).
* Decoding: the msgpack codec, which walks a message for NaN, infinity, bin and ext values only when one of their
  first bytes is in it, against the walk of every message.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

import msgpack
import pytest

from plyhall import compiled
from protocol.codec import CODECS, MSGPACK, _has_bad_value
from protocol.games import GAMES, IllegalMove
from protocol.games.base import Game, first_seat_option
from protocol.messages import ProtocolError, validate_request
from server.core.clock import Clocks, TimeControl
from server.core.env import Env
from server.core.hall import Hall, HallOutbox, Limits
from server.core.room import Room
from server.core.room_settings import RoomSettings
from server.core.room_state import Outbox

C4 = GAMES["connect4"]

# Rules ------------------------------------------------------------------------------------------------------------


def fields(obj: Any) -> dict[str, Any]:
    """An object's attributes by name, from its slots (``vars`` of one that has no ``__dict__``), or the compiled
    core's list of them."""
    names = getattr(type(obj), "__slots__", None) or type(obj).__mypyc_attrs__
    return {name: getattr(obj, name) for name in names}


def _answer(call: Any) -> Any:
    """What ``call()`` gives: its value, or the exception's type and text."""
    try:
        return call()
    except (IllegalMove, ValueError) as exc:
        return type(exc), str(exc)


def test_connect4_checked_move_answers_as_parse_then_apply():
    rng = random.Random(44)
    things: list[Any] = [None, True, False, 0, 1, 4, 7, 8, -1, 2.0, "4", " 3 ", "x", "", "1", "7", "0", "8", "04",
                         "\u0664", "4\n", [], {}, {"col": 1},
                         {"column": True}, {"column": 3.0}, {"column": "3"}, {"column": 2, "x": 1}, C4.parse_move(
                             "5", C4.initial_state())]
    states = []
    for _ in range(300):
        state = C4.initial_state(first=rng.choice((0, 1)))
        for _ in range(rng.randrange(43)):
            if C4.outcome(state) is not None:
                break
            state = C4.apply(state, rng.choice(C4.legal_moves(state)))
        states.append(state)
    full_column = finished = 0
    for state in states:
        for _ in range(20):
            roll = rng.random()
            obj = {"column": rng.randrange(-1, 9)} if roll < 0.4 else str(rng.randrange(9)) if roll < 0.6 else \
                rng.choice(things)
            coords = rng.choice(("algebraic", "cosc322", "matrix", "chess"))
            fast = _answer(lambda: C4.checked_move(obj, state, coords))  # noqa: B023 (called at once)
            slow = _answer(lambda: (m := C4.parse_move(obj, state, coords), C4.apply(state, m)))  # noqa: B023
            assert fast == slow, (obj, coords, str(state))
            if isinstance(fast, tuple) and not isinstance(fast[0], type):
                assert fast[1].result == slow[1].result  # compare=False in the state's equality: checked apart
            full_column += isinstance(slow[0], type) and "is full" in slow[1]
            finished += C4.outcome(state) is not None
    assert full_column and finished  # the refusals the shortcut leaves to the general path were reached


def test_after_move_is_outcome_seat_to_move_and_notation():
    rng = random.Random(4406)
    for game in GAMES.values():
        for _ in range(3 if game.id == "connect4" else 1):
            state = game.initial_state()
            for _ in range(60):
                if game.outcome(state) is not None:
                    break
                move = rng.choice(game.legal_moves(state))
                state = game.apply(state, move)
                outcome = game.outcome(state)
                expected = (outcome, None if outcome is not None else game.to_move(state), game.notation(move))
                assert game.after_move(move, state) == expected == Game.after_move(game, move, state), game.id


def test_every_game_s_first_mover_is_what_its_first_option_says():
    for game in GAMES.values():  # a room's next game is started from the option, without an initial state first
        choices: list[dict[str, Any]] = [{}, {"first": 0}, {"first": 1}]
        choices += [{"first": colour} for colour in game.first_colours or ()]
        for options in choices:
            expected = game.to_move(game.initial_state(**options))
            assert first_seat_option(options.get("first", 0), game.first_colours) == expected, (game.id, options)


def test_connect4_move_forms_are_what_each_convention_says():
    for column in range(7):
        move = C4.parse_move(str(column + 1), C4.initial_state())
        assert [C4.format_move(move, coords) for coords in ("algebraic", "cosc322", "matrix")] == \
            [{"column": column + 1}, {"column": column + 1}, {"column": column}]
        with pytest.raises(ValueError, match="unknown coordinate convention 'chess'"):
            C4.format_move(move, "chess")


# Room and hall ----------------------------------------------------------------------------------------------------

NAMES = ("ann", "bob", "cat", "dan", "eve")
COORDS = ("algebraic", "matrix", "algebraic", "cosc322", "matrix")  # each name's, as it logs in
ROOM_NAMES = ("Lake", "Wood  lake", "pond")


def _login(name: str, token: str | None = None) -> dict[str, Any]:
    return {"type": "login", "name": name, "coords": COORDS[NAMES.index(name)], **({"resume": token} if token else {})}


def _general(hall: Hall) -> None:
    """Make ``hall`` and every room it holds take the general paths only (Python's core: the compiled core's classes
    keep their methods and their class)."""
    if compiled.active():
        pytest.skip("the general paths are swapped in by patching the hall and its rooms, which the compiled core's "
                    "classes do not allow")
    hall._apply = hall._apply_general  # type: ignore[method-assign]
    hall._move_request = hall._room_request  # type: ignore[method-assign,assignment]
    for room in hall.rooms.values():
        room.__class__ = GeneralRoom  # the same fields (slots), its move the general one


class GeneralRoom(Room):
    """A :class:`Room` whose moves take the general path (``Room._move``) only."""

    __slots__ = ()
    move = Room._move


def _request(rng: random.Random, hall: Hall, conn: int) -> tuple[int, dict[str, Any]]:
    """A random request of the kinds a move's neighbours are, and who sends it: moves (mostly legal ones by the
    player to move), joins, leaves, resigns and draw offers; a room that is gone is opened again."""
    room_name = rng.choice(ROOM_NAMES)
    room = hall.registry.find(room_name)
    if room is None:
        index = ROOM_NAMES.index(room_name)
        return conn, {"type": "create_room", "game": "connect4", "name": room_name, "games": 50, "grace": 3,
                      "time_control": ({"per_move": 5}, {"initial": 20, "increment": 1}, {"untimed": True})[index],
                      "illegal_move": ("lose", "reject", "reject")[index]}
    roll = rng.random()
    if roll < 0.9 and room.state is not None and C4.outcome(room.state) is None:
        to_move = room.seats[C4.to_move(room.state)]
        session = hall.by_name.get(to_move or "")
        if session is not None and rng.random() < 0.8:
            conn = session.conn
        column = rng.choice(C4.legal_moves(room.state)).column
        move: Any = rng.choice(({"column": column + 1}, {"column": column + 1}, {"column": column}, str(column + 1),
                                {"column": 9}, "x"))
        return conn, {"type": "move", "room": rng.choice((room_name, room_name.upper(), f" {room_name} ")),
                      "move": move, **({"id": rng.randrange(9)} if rng.random() < 0.2 else {})}
    if roll < 0.95:
        return conn, {"type": "join", "room": room_name, **({"role": "spectator"} if rng.random() < 0.3 else {})}
    if roll < 0.98:
        return conn, {"type": "leave", "room": room_name}
    return conn, {"type": rng.choice(("resign", "offer_draw")), "room": room_name}


def _next_deadline_as_before(room: Any) -> float | None:
    """``RoomState.next_deadline`` as it was before its shortcut for a room with nobody away and no idle limit."""
    earliest = min(room.away.values()) if room.away else None
    if room.status == "playing" and room.clocks is not None:
        for deadline in (room.clocks.deadline(), room._idle_deadline()):
            if deadline is not None and (earliest is None or deadline < earliest):
                earliest = deadline
    return earliest


def test_a_move_s_shortcuts_answer_as_the_general_paths():
    rng = random.Random(4404)
    halls = [Hall(Env.fixed(), Limits()) for _ in range(2)]
    _general(halls[1])
    played: Counter[str] = Counter()  # moves sent, moves played, games ended
    tokens: dict[str, str] = {}  # each name's resume token

    def feed(call: str, *args: Any) -> None:
        """``call`` on both halls: the same outbox from each."""
        outs: list[HallOutbox] = [getattr(hall, call)(*args) for hall in halls]
        assert outs[0] == outs[1]
        for conn, msg in outs[0].messages:  # a game's start shares its state between members: each as made alone
            room = halls[0].registry.find(msg["room"]) if msg["type"] == "game_start" else None
            if room is not None and (msg["record"], msg["moves"]) == (room.record_id, room.notations):
                # (the game as it is still: no move since, in the same call)
                name = halls[0].sessions[conn].name
                alone = Outbox()
                room._send_full_state(alone, name, args[-1])
                assert alone.messages[0] == (name, msg)  # (then the standing draw offer, if one stands)
                assert [m["type"] for _, m in alone.messages[1:]] == (["draw_offered"] if room.draw_offer is not None
                                                                      else [])
                played["started"] += 1
        done = [hall.committed(out, args[-1]) for hall, out in zip(halls, outs, strict=True)]
        assert done[0] == done[1]  # what follows once the writes are stored
        _general(halls[1])  # and the rooms it opened
        for room in halls[0].rooms.values():
            assert room.next_deadline() == _next_deadline_as_before(room)
            played["away"] += bool(room.away)
        played["played"] += any(msg["type"] == "moved" for _, msg in outs[0].messages)
        played["ended"] += len(outs[0].ended)
        for _, msg in outs[0].messages:
            if msg["type"] == "welcome":
                tokens[msg["name"]] = msg["resume"]

    now = 0.0
    for conn, name in enumerate(NAMES, 1):
        feed("handle", conn, validate_request(_login(name)), now)
    connected = set(range(1, len(NAMES) + 1))
    for _ in range(5000):
        now += rng.choice((0.01, 0.5, 2.0, 6.0)) if rng.random() < 0.1 else 0.01
        roll = rng.random()
        if connected and roll < 0.9:
            conn, request = _request(rng, halls[0], rng.choice(sorted(connected)))
            msg = validate_request(request)
            assert not isinstance(msg, ProtocolError), msg
            played["sent"] += msg["type"] == "move"
            feed("handle", conn, msg, now)
        elif connected and roll < 0.93:
            conn = rng.choice(sorted(connected))
            connected.discard(conn)
            feed("disconnect", conn, now)
        elif roll < 0.96 and len(connected) < len(NAMES):
            back = min(set(range(1, len(NAMES) + 1)) - connected)
            connected.add(back)
            feed("handle", back, validate_request(_login(NAMES[back - 1], tokens.get(NAMES[back - 1]))), now)
        else:
            feed("tick", now)
    assert played["sent"] > 1000 and played["played"] > 500 and played["ended"] > 20 and played["away"], played
    assert played["started"] > 40, played
    plays = [[(room.name, room.moves, room.points, room.status) for room in hall.rooms.values()] for hall in halls]
    assert plays[0] == plays[1]


def _opening(game_id: str) -> tuple[str, ...]:
    """Two legal first moves of ``game_id``, as notation."""
    game, notations = GAMES[game_id], []
    state = game.initial_state()
    for _ in range(2):
        move = game.legal_moves(state)[-1]
        notations.append(game.notation(move))
        state = game.apply(state, move)
    return tuple(notations)


def test_a_game_s_start_shares_only_what_each_member_s_convention_makes_alike():
    for game_id in ("connect4", "amazons"):  # boards whose row order differs between conventions once stones are on
        room = Room("Lake", RoomSettings.parse(game_id, time_control={"initial": 60, "increment": 1}, games=3),
                    Env.fixed(1000.0), opening=_opening(game_id))
        room.join("cat", "matrix", 0.1, role="spectator")
        room.join("dan", "cosc322", 0.2, role="spectator")
        room.join("ann", "algebraic", 0.5)
        starts = [(name, msg) for name, msg in room.join("bob", "matrix", 0.6).messages if msg["type"] == "game_start"]
        assert sorted(name for name, _ in starts) == ["ann", "bob", "cat", "dan"] and room.notations  # opening played
        for name, msg in starts:
            alone = Outbox()
            room._send_full_state(alone, name, 0.6)
            assert alone.messages == [(name, msg)], name


# Clocks -----------------------------------------------------------------------------------------------------------


def _snapshot_as_before(clocks: Clocks, now: float) -> dict[str, Any]:
    """The clock snapshot as it was made before ``both_left``: each seat's ``left`` in turn, each rounded."""
    def left(seat: int) -> float | None:
        if clocks.final is not None:
            return clocks.final[seat]
        control = clocks.control
        if control.per_move is not None:
            if seat == clocks.running:
                return max(0.0, control.per_move - (now - clocks.turn_started))
            return control.per_move
        if control.initial is not None:
            value = clocks.remaining[seat]
            if seat == clocks.running:
                value -= now - clocks.turn_started
            return max(0.0, value)
        return None

    first, second = left(0), left(1)
    return {"left": [None if first is None else round(first, 3), None if second is None else round(second, 3)],
            "running": clocks.running, "control": clocks.control.wire}


def _twin(clocks: Clocks) -> Clocks:
    """A deep copy of ``clocks``, field by field (``copy.deepcopy`` cannot make the compiled core's: its class has
    no constructor without arguments)."""
    twin = Clocks(clocks.control, None, 0.0)  # the time control shared: it is frozen
    for name, value in fields(clocks).items():
        if name != "control":
            setattr(twin, name, copy.deepcopy(value))
    return twin


def test_clock_snapshots_are_what_each_seat_s_time_left_rounded_gave():
    rng = random.Random(404)
    controls = [TimeControl(per_move=5.0), TimeControl.parse({"per_move": 30}), TimeControl(per_move=0.25, margin=1.0),
                TimeControl(per_move=0.1234567), TimeControl(per_move=2.5, initial=10.0, increment=1.0),
                TimeControl(initial=60.0, increment=1.5), TimeControl(initial=0.5, margin=2.0), TimeControl()]
    for _ in range(300):
        clocks = Clocks(rng.choice(controls), rng.choice((0, 1, None)), 0.0)
        now = 0.0
        for _ in range(30):
            now += rng.choice((0.0, 0.001, 0.1234567, 1.0, 3.3, 40.0))
            action = rng.random()
            if action < 0.6:
                seat = rng.choice((0, 1, None))
                twin = _twin(clocks)  # the same clocks, switched and snapshotted in two calls
                elapsed, switched = clocks.switched(now, seat)
                assert (elapsed, switched) == (twin.switch(now, seat), twin.snapshot(now))
                assert [type(v) for v in switched["left"]] == [type(v) for v in twin.snapshot(now)["left"]]
                assert fields(twin) | {"_left_after": None} == fields(clocks) | {"_left_after": None}
            elif action < 0.65:
                clocks.stop(now)
            elif action < 0.7:
                clocks.start(rng.choice((0, 1)), now)
            probe = now + rng.choice((0.0, 0.0005, 0.7, 100.0))
            snapshot = clocks.snapshot(probe)
            assert snapshot == _snapshot_as_before(clocks, probe)
            assert [type(v) for v in snapshot["left"]] == [type(v) for v in _snapshot_as_before(clocks, probe)["left"]]
            assert [clocks.left(seat, probe) for seat in (0, 1)] == list(clocks.both_left(probe))


# Decoding ---------------------------------------------------------------------------------------------------------


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    """A random msgpack value: scalars of every kind (some NaN, infinite, bin or ext), lists and maps of them."""
    roll = rng.random()
    if roll < 0.15 and depth < 4:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if roll < 0.3 and depth < 4:
        return {rng.choice(("type", "room", "move", "Ąż", "x" * 40)): _random_value(rng, depth + 1)
                for _ in range(rng.randrange(4))}
    return rng.choice([0, 1, -1, 127, 128, 255, 2**16, 2**31, -(2**31), 2**53, -(2**63), 2**64 - 1, 0xcb, -54,
                       "", "move", "Ë", "Ąą room", "\u00cb" * 30, True, False, None, 0.5, -2.75, float("nan"),
                       float("inf"), float("-inf"), b"", b"\xcb", msgpack.ExtType(1, b""), msgpack.ExtType(5, b"ab")])


def test_msgpack_decoding_refuses_what_the_full_walk_refuses():
    rng = random.Random(4411)
    codec = CODECS[MSGPACK]
    walked = refused = 0
    for _ in range(3000):
        value = {"type": "move", "room": "Lake", "move": _random_value(rng)}
        data = msgpack.packb(value, use_bin_type=True)
        decoded = codec.decode(data)
        reference = msgpack.unpackb(data, raw=False, strict_map_key=False)
        if _has_bad_value(reference):
            refused += 1
            assert isinstance(decoded, ProtocolError) and decoded.code == "bad_encoding", value
        else:
            walked += 1
            assert decoded == reference, value
    assert refused > 300 and walked > 1000
