"""Who gets a name: every cell of the rule table (docs/PROTOCOL.md section 9), the back-off of failed
proofs, and the fair queue of secret checks. Sans I/O, through ``tests.helpers.HallDriver``; the same
attacks against a real ``plyhall serve`` process are in test_attacks.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.core.identity import RULES, Backoff, FairQueue, Holder, Proof, Verdict
from tests.helpers import HallDriver, assert_clear_error

PROTOCOL_MD = Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md"
NAME = "ann"
RIGHT, WRONG = "ann-secret", "a-guess"


def holding(holder: Holder, claimed: bool) -> tuple[HallDriver, str | None]:
    """A hall where ``holder`` holds the name ann (claimed with RIGHT or not); with the latest resume token of
    ann (None where nobody holds the name: its tokens are forgotten)."""
    desk = HallDriver(organiser_secret="organiser-secret")
    secret = {"secret": RIGHT} if claimed else {}
    if holder in (Holder.NOBODY, Holder.CLAIMING):  # ann was here once (claiming the name, or not), and left
        desk.login(NAME, **secret)
        token = desk.last(NAME, "welcome")["resume"]
        desk.disconnect(NAME)
        if holder is Holder.CLAIMING:  # another login's secret is being hashed right now (the check still runs)
            out = desk.hall.handle(desk.conn("claimer"), {"type": "login", "name": NAME, "secret": "first"}, 0.0)
            assert out.checks and not out.messages
        return desk, token
    if holder is Holder.ENTRY:
        desk.login("org", organiser="organiser-secret")
        reply = desk.send("org", {"type": "tournament_create", "game": "connect4", "format": "round-robin",
                                  "name": "Cup", "players": [NAME, "bob"]})
        assert reply[-1]["type"] == "tournament", reply
    desk.login(NAME, **secret)
    token = desk.last(NAME, "welcome")["resume"]
    if holder is Holder.SEAT:
        desk.login("bob")
        desk.send(NAME, {"type": "create_room", "game": "connect4", "name": "Keep"})
        desk.send(NAME, {"type": "join", "room": "Keep", "seat": 0})
        assert desk.send("bob", {"type": "join", "room": "Keep", "seat": 1})[-1]["type"] == "game_start"
    if holder in (Holder.SEAT, Holder.ENTRY):
        desk.disconnect(NAME)
    return desk, token


def table_cells() -> list:
    """Every cell, with the claimed names' secret column split into a right and a wrong secret."""
    cells = []
    for (claimed, holder, proof), verdict in RULES.items():
        if claimed and proof is Proof.SECRET:
            for right in (True, False):
                cells.append(pytest.param(claimed, holder, proof, right, verdict,
                                          id=f"claimed-{holder.name}-{'right' if right else 'wrong'}-secret"))
            continue
        cells.append(pytest.param(claimed, holder, proof, True, verdict,
                                  id=f"{'claimed' if claimed else 'unclaimed'}-{holder.name}-{proof.name}"))
    return cells


@pytest.mark.parametrize(("claimed", "holder", "proof", "right", "verdict"), table_cells())
def test_every_cell_of_the_rule_table(claimed, holder, proof, right, verdict):
    desk, token = holding(holder, claimed)
    login = {"type": "login", "name": NAME}
    if proof is Proof.SECRET:
        login["secret"] = (RIGHT if right else WRONG) if claimed else "a-new-secret"
    if proof is Proof.TOKEN:
        login["resume"] = token  # for a free name: the token its last holder had
    replies = desk.send("newcomer", login)
    first = replies[0]
    if verdict is Verdict.CHECK:
        verdict = Verdict.PROVEN if right else Verdict.WRONG_SECRET
    if verdict.refused:
        assert_clear_error(first, verdict.value, login)
        # whoever held the name still holds it
        if holder is Holder.SESSION:
            assert not desk.closed and desk.hall.by_name[NAME].conn == desk.conn(NAME)
            assert desk.send(NAME, {"type": "list_rooms"})[0]["type"] == "rooms"
        if holder is Holder.SEAT:
            assert desk.hall.rooms["Keep"].seats[0] == NAME and 0 in desk.hall.rooms["Keep"].away
        return
    assert first["type"] == "welcome", first
    assert first["claimed"] is (claimed or verdict is Verdict.CLAIM or (proof is Proof.SECRET and not claimed))
    assert desk.hall.by_name[NAME].conn == desk.conn("newcomer")
    if holder is Holder.SEAT:  # the seat is resumed: the game goes on with the newcomer in seat 0
        assert [m["seat"] for m in replies if m["type"] == "game_start"] == [0]
        assert 0 not in desk.hall.rooms["Keep"].away


def test_a_proven_login_takes_the_session_over_and_closes_the_old_connection():
    for claimed, proof in ((False, "resume"), (True, "resume"), (True, "secret")):
        desk, token = holding(Holder.SESSION, claimed)
        desk.send("newcomer", {"type": "login", "name": NAME, proof: token if proof == "resume" else RIGHT})
        assert desk.closed == [(NAME, "logged in from another connection")]


def test_a_token_of_a_name_nobody_holds_any_more_proves_nothing():
    desk, _ = holding(Holder.SESSION, claimed=False)
    token = desk.last(NAME, "welcome")["resume"]
    desk.disconnect(NAME)
    assert NAME not in desk.hall.logins.identities  # forgotten as the name became free
    welcome = desk.send("later", {"type": "login", "name": NAME, "resume": token})[0]
    assert welcome["type"] == "welcome" and welcome["claimed"] is False


def test_a_claim_that_finishes_after_someone_else_took_the_name_is_refused():
    desk = HallDriver()
    slow = desk.hall.handle(desk.conn("slow"), {"type": "login", "name": NAME, "secret": "s1"}, 0.0)
    assert slow.checks
    # meanwhile: nobody else may take the name, with or without a secret
    for login in ({"type": "login", "name": NAME}, {"type": "login", "name": NAME, "secret": "s2"}):
        assert_clear_error(desk.send("other", login)[0], "name_in_use", login)
    done = desk.take(slow)  # the claim finishes: the name is the claimer's
    assert done[0][1]["type"] == "welcome" and done[0][1]["claimed"] is True


def test_a_held_tournament_entry_is_not_taken_with_a_fresh_secret_but_comes_back_with_its_token():
    desk, token = holding(Holder.ENTRY, claimed=False)
    desk.login("bob")
    desk.send("org", {"type": "tournament_control", "tournament": "Cup", "action": "start"})
    refused = desk.send("thief", {"type": "login", "name": NAME, "secret": "mine-now"})[0]
    assert_clear_error(refused, "resume_required")
    back = desk.send("owner", {"type": "login", "name": NAME, "resume": token})
    assert back[0]["type"] == "welcome" and back[0]["rooms"]  # seated in its first game at once


def test_the_table_in_the_protocol_reference_is_the_code_table():
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    section = text[text.index("## 9."):text.index("## 10.")]
    for claimed in (False, True):
        heading = "claimed name" if claimed else "unclaimed name"
        block = section[section.index(f"| {heading} |"):]
        for holder in Holder:
            if (claimed, holder, Proof.NOTHING) not in RULES:
                continue
            row = re.search(rf"^\| {re.escape(holder.value)} \|(.*)$", block, re.M)
            assert row, (heading, holder)
            cells = [c.strip() for c in row.group(1).split("|")[:3]]
            for proof, cell in zip((Proof.NOTHING, Proof.SECRET, Proof.TOKEN), cells, strict=True):
                verdict = RULES[(claimed, holder, proof)]
                assert _DOC_WORDS[verdict] in cell, (heading, holder, proof, cell)


_DOC_WORDS = {
    Verdict.ADMIT: "welcome",
    Verdict.CLAIM: "claims it",
    Verdict.PROVEN: "welcome",
    Verdict.CHECK: "checked",
    Verdict.NAME_IN_USE: "`name_in_use`",
    Verdict.RESUME_REQUIRED: "`resume_required`",
    Verdict.WRONG_SECRET: "`wrong_secret`",
}


# Back-off -------------------------------------------------------------------------------------


def test_failures_from_one_address_never_slow_down_a_login_from_another():
    desk = HallDriver()
    desk.connect("owner", "10.0.0.1")
    desk.send("owner", {"type": "login", "name": NAME, "secret": RIGHT})
    desk.disconnect("owner")
    for attempt in range(40):
        desk.connect(f"guess{attempt}", "10.6.6.6")
        reply = desk.send(f"guess{attempt}", {"type": "login", "name": NAME, "secret": f"guess{attempt}"})[0]
        assert reply["code"] in ("wrong_secret", "throttled")
    assert reply["code"] == "throttled" and reply["retry_after"] > 0
    desk.connect("owner again", "10.0.0.2")
    assert desk.send("owner again", {"type": "login", "name": NAME, "secret": RIGHT})[0]["type"] == "welcome"


def test_a_resume_token_is_never_throttled():
    desk = HallDriver()
    desk.connect("owner", "10.0.0.1")
    token = desk.send("owner", {"type": "login", "name": NAME, "secret": RIGHT})[0]["resume"]
    for attempt in range(30):  # the same address sprays wrong secrets for the name
        desk.connect(f"guess{attempt}", "10.0.0.1")
        desk.send(f"guess{attempt}", {"type": "login", "name": NAME, "secret": f"guess{attempt}"})
    desk.connect("late", "10.0.0.1")
    assert desk.send("late", {"type": "login", "name": NAME, "secret": RIGHT})[0]["code"] == "throttled"
    desk.connect("token", "10.0.0.1")
    assert desk.send("token", {"type": "login", "name": NAME, "resume": token})[0]["type"] == "welcome"


def test_wrong_organiser_secrets_back_off_and_do_not_lock_out_other_addresses():
    desk = HallDriver(organiser_secret="the-real-one")
    codes = []
    for attempt in range(12):
        desk.connect(f"g{attempt}", "10.6.6.6")
        codes.append(desk.send(f"g{attempt}", {"type": "login", "name": f"g{attempt}", "organiser": f"x{attempt}"})
                     [0]["code"])
    assert codes[:3] == ["not_organiser"] * 3 and "throttled" in codes
    desk.connect("right-but-throttled", "10.6.6.6")
    right = {"type": "login", "name": "org1", "organiser": "the-real-one"}
    assert desk.send("right-but-throttled", right)[0]["code"] == "throttled"  # no oracle while throttled
    desk.connect("organiser", "10.0.0.9")
    assert desk.send("organiser", {**right, "name": "org2"})[0]["organiser"] is True


def test_backoff_doubles_after_the_free_failures_and_is_forgotten():
    backoff = Backoff(free=2, first=1.0, max_delay=8.0, forget=100.0)
    waits = []
    for _ in range(7):
        backoff.failed("k", 0.0)
        waits.append(backoff.wait("k", 0.0))
    assert waits == [0.0, 0.0, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff.wait("k", 8.0) == 0.0 and backoff.wait("other", 0.0) == 0.0
    assert backoff.wait("k", 200.0) == 0.0 and "k" not in backoff.keys
    backoff.failed("j", 0.0)
    backoff.forgive("j")
    assert backoff.count("j") == 0


def test_the_fair_queue_takes_addresses_in_turn():
    queue: FairQueue[str] = FairQueue()
    for i in range(100):
        queue.push("flooder", f"f{i}")
    queue.push("owner", "o1")
    queue.push("other", "x1")
    taken = [queue.pop() for _ in range(4)]
    assert taken == ["f0", "o1", "x1", "f1"] and len(queue) == 98


def test_failures_slow_down_only_guesses_at_claimed_names():
    desk = HallDriver()
    for i in range(40):  # an address sprays wrong secrets at many claimed names
        desk.connect(f"owner{i}", "10.0.0.1")
        desk.send(f"owner{i}", {"type": "login", "name": f"owned{i}", "secret": "theirs"})
        desk.connect(f"guess{i}", "10.6.6.6")
        desk.send(f"guess{i}", {"type": "login", "name": f"owned{i}", "secret": "guess"})
    desk.connect("late guess", "10.6.6.6")
    assert desk.send("late guess", {"type": "login", "name": "owned0", "secret": "again"})[0]["code"] == "throttled"
    # the same address may still use a free name, and claim a new one: neither guesses anything
    desk.connect("plain", "10.6.6.6")
    assert desk.send("plain", {"type": "login", "name": "somebody"})[0]["type"] == "welcome"
    desk.connect("claimer", "10.6.6.6")
    assert desk.send("claimer", {"type": "login", "name": "newname", "secret": "mine"})[0]["claimed"] is True


def test_house_names_take_no_shortcut_past_the_other_checks():
    desk = HallDriver(organiser_secret="organiser-secret")
    secret = desk.hall.house_secret
    bad = [({"name": "house-random-1", "secret": secret, "organiser": "a-guess"}, "not_organiser"),
           ({"name": "house-random-1", "secret": secret, "coords": "hex"}, "bad_message"),
           ({"name": "House-random-1"}, "bad_name"),
           ({"name": "HOUSE-master-2", "secret": secret}, "bad_name")]
    for fields, code in bad:
        assert_clear_error(desk.send(fields["name"] + code, {"type": "login", **fields})[0], code, fields)
    assert desk.send("bot", {"type": "login", "name": "house-random-1", "secret": secret})[0]["type"] == "welcome"


def test_a_backoff_key_that_failed_a_thousand_times_still_answers():
    backoff = Backoff(free=1)
    for second in range(3000):
        backoff.failed("flood", float(second))
    assert backoff.wait("flood", 3000.0) <= backoff.max_delay


def test_a_spray_of_keys_is_remembered_only_up_to_a_bound():
    backoff = Backoff(free=1, max_keys=1000)
    for i in range(5000):
        backoff.failed(("10.0.0.1", f"name{i}"), float(i))
    assert len(backoff.keys) <= 1000 and backoff.count(("10.0.0.1", "name4999")) == 1
