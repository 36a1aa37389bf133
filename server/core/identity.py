"""Who a login is: the rule table of names, claimed names (a salted PBKDF2 hash of the secret),
resume tokens, and the back-off on failed logins.

**The rule table.** Whether a login gets a name depends on two things only: who holds the name
now (:class:`Holder`: nobody, a live session, a seat kept while its player is away, a tournament
entry, another login that is claiming it) and what the login proves (:class:`Proof`: nothing,
a secret, or the name's latest resume token). :data:`RULES` maps every pair, for unclaimed and
claimed names, to a :class:`Verdict`. A name is claimed only when nobody holds it; a holder comes
back with its secret or its resume token, never with a fresh secret. docs/PROTOCOL.md section 9
prints the same table, and ``tests/test_identity.py`` checks every cell.

**Secrets.** Checking a secret costs PBKDF2 (milliseconds of CPU), so the hall never does it
itself: it hands the I/O layer a :class:`SecretCheck`, which runs off the event loop, fairly
between addresses (:class:`FairQueue`), and whose answer is fed back. A resume token is a random
value given in every ``welcome``; only its SHA-256 is kept, and checking it is cheap.

**Back-off.** Failed proofs are counted per address and per address and name together
(:class:`Backoff`): each key pays a growing wait after a few free failures. A failure from one
address never delays a login from another, and a valid resume token is never delayed at all, so
nobody can lock an owner out by guessing at its name.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

HASH_ITERATIONS = 20_000


def _pbkdf2(secret: str, salt: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt.encode(), HASH_ITERATIONS).hex()


def token_digest(token: str) -> str:
    """The stored form of a resume token."""
    return hashlib.sha256(token.encode()).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Compare two secrets in constant time (the time does not tell how much of ``given`` was right)."""
    return hmac.compare_digest(given.encode(), expected.encode())


# The rule table ------------------------------------------------------------------------------


class Holder(StrEnum):
    """Who holds a name at the moment a login for it arrives (the first that applies)."""

    SESSION = "a live session"
    SEAT = "a seat kept for its player"
    ENTRY = "a tournament entry"
    CLAIMING = "a login claiming it"
    NOBODY = "nobody"


class Proof(StrEnum):
    """What a login proves about its identity."""

    TOKEN = "the latest resume token"
    SECRET = "a secret"
    NOTHING = "nothing"


class Verdict(StrEnum):
    """What the server does with a login."""

    ADMIT = "welcome, unclaimed"
    CLAIM = "welcome, the secret claims the name"
    PROVEN = "welcome: takes over the session, resumes the seats"
    CHECK = "the secret is checked: welcome if right, wrong_secret if not"
    NAME_IN_USE = "name_in_use"
    RESUME_REQUIRED = "resume_required"
    WRONG_SECRET = "wrong_secret"

    @property
    def refused(self) -> bool:
        """True for the verdicts that are an error code."""
        return self in (Verdict.NAME_IN_USE, Verdict.RESUME_REQUIRED, Verdict.WRONG_SECRET)


def _row(claimed: bool, holder: Holder) -> dict[Proof, Verdict]:
    if claimed:
        row = {Proof.NOTHING: Verdict.WRONG_SECRET, Proof.SECRET: Verdict.CHECK, Proof.TOKEN: Verdict.PROVEN}
    elif holder is Holder.NOBODY:
        row = {Proof.NOTHING: Verdict.ADMIT, Proof.SECRET: Verdict.CLAIM, Proof.TOKEN: Verdict.PROVEN}
    else:
        kept = Verdict.NAME_IN_USE if holder in (Holder.SESSION, Holder.CLAIMING) else Verdict.RESUME_REQUIRED
        row = {Proof.NOTHING: kept, Proof.SECRET: kept, Proof.TOKEN: Verdict.PROVEN}
    if holder in (Holder.NOBODY, Holder.CLAIMING):  # a free name's tokens are forgotten: a token proves nothing
        row[Proof.TOKEN] = row[Proof.NOTHING]
    return row


RULES: dict[tuple[bool, Holder, Proof], Verdict] = {
    (claimed, holder, proof): verdict
    for claimed in (False, True) for holder in Holder for proof, verdict in _row(claimed, holder).items()
    if not (claimed and holder is Holder.CLAIMING)  # a claimed name is never being claimed
}
"""(the name is claimed, who holds it, what the login proves) -> what happens.

A login proves what its strongest proof shows: the name's latest resume token (while somebody holds
the name: a free name's tokens are forgotten), else a secret, else nothing. For an unclaimed name, a
token-proven login that also carries a secret claims the name with it (that is how a player claims
the name it is using)."""

REFUSAL_TEXT = {
    Verdict.NAME_IN_USE: "{name} is in use right now ({holder}): stop the other program or page logged in as "
                         "{name}, or choose another name",
    Verdict.RESUME_REQUIRED: "{name} is held by {holder} whose owner is away, and it gave no secret, so a new secret "
                             "cannot take it: log in with that connection's resume token, or choose another name",
    Verdict.WRONG_SECRET: "the name {name} is claimed; log in with its secret (or your resume token) or choose "
                          "another name",
}
"""The sentence of each refusal (``{name}`` and ``{holder}`` filled in)."""

RESTARTED_TOO_SOON = {
    Holder.SEAT: "{name} is still held by a seat kept for the connection that just went away (a bot restarted "
                 "within its room's grace period): {when}, or start the bot with --secret S so that a restart takes "
                 "the name back at once",
    Holder.ENTRY: "{name} is held by its tournament entry for the connection that just went away, and without a "
                  "secret only that connection's resume token takes it back: ask the organiser, and give the bot a "
                  "--secret S from the start so that a restart takes the name back at once",
}
"""The refusal of a login that carries nothing (no secret, no token) for a name kept for its away owner: most
often a bot restarted without ``--secret`` before its old seat was given up."""


def refusal_text(verdict: Verdict, name: str, holder: Holder, proof: Proof, free_in: float | None = None) -> str:
    """The sentence of a refused login: :data:`REFUSAL_TEXT`, or :data:`RESTARTED_TOO_SOON` for a login that
    proves nothing (no secret to speak of) of a name kept for its owner. ``free_in``: seconds until the last seat
    kept for the name is given up, when this server knows it (it says the time actually left)."""
    if verdict is Verdict.RESUME_REQUIRED and proof is Proof.NOTHING and holder in RESTARTED_TOO_SOON:
        return RESTARTED_TOO_SOON[holder].format(name=name, when=_when_free(free_in))
    if verdict is Verdict.WRONG_SECRET and proof is Proof.SECRET:  # a secret was given: it was the wrong one
        return f"wrong secret for {name}, a claimed name; give its secret (or your resume token) or choose another name"
    return REFUSAL_TEXT[verdict].format(name=name, holder=holder.value)


def _when_free(free_in: float | None) -> str:
    """When a seat kept for an away player is given up, in words for the refused login."""
    if free_in is None:  # held on another node of a cluster: its time is not known here
        return "wait until the seat is given up (the room's grace period, 30 s unless the room says otherwise) and " \
               "start again"
    return f"the seat is given up in {max(1, math.ceil(free_in))} s unless that connection comes back: start again then"


def decide(claimed: bool, holder: Holder, proof: Proof) -> Verdict:
    """Look the login up in :data:`RULES`."""
    return RULES[(claimed, holder, proof)]


# Secrets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A stored name claim: salted hash of the secret."""

    salt: str
    digest: str

    @classmethod
    def make(cls, secret: str) -> Claim:
        """A new claim for ``secret`` (slow: PBKDF2)."""
        salt = secrets.token_hex(8)
        return cls(salt, _pbkdf2(secret, salt))

    def matches(self, secret: str) -> bool:
        """True when ``secret`` is the claimed one (slow: PBKDF2; constant-time compare)."""
        return hmac.compare_digest(self.digest, _pbkdf2(secret, self.salt))


@dataclass
class SecretCheck:
    """A login waiting for its secret to be checked (or a new claim to be hashed) off the event loop."""

    conn: int
    login: dict[str, Any]
    claim: Claim | None  # None: the name is unclaimed and the secret claims it
    address: str = "?"
    proven: bool = False  # the login proved its identity with a token already (and claims the name)

    def run(self) -> Claim | bool:
        """Do the slow part: the new :class:`Claim`, or whether the secret matches. Safe in any thread."""
        secret = self.login["secret"]
        if self.claim is None:
            return Claim.make(secret)
        return self.claim.matches(secret)


@dataclass
class ClaimLookup:
    """A login for a name this server knows no claim of, on a database other servers share: the I/O
    layer looks the claim up there (off the event loop) and feeds it back (``Hall.claim_looked_up``)."""

    conn: int
    login: dict[str, Any]


# Back-off ----------------------------------------------------------------------------------


@dataclass
class _Failures:
    count: int = 0
    last: float = -math.inf


@dataclass
class Backoff:
    """Growing waits after failures, per key (an address, or an address and a name).

    ``free`` failures cost nothing; from then on each failure makes the key wait twice as long
    as the one before, from ``first`` seconds up to ``max_delay``. A key's failures are
    forgotten after ``forget`` quiet seconds, or at once by :meth:`forgive`.
    """

    free: int
    first: float = 1.0
    max_delay: float = 300.0
    forget: float = 900.0
    max_keys: int = 100_000  # keys remembered at most (a spray of addresses and names must not fill memory)
    keys: dict[Hashable, _Failures] = field(default_factory=dict)

    def wait(self, key: Hashable, now: float) -> float:
        """Seconds ``key`` must wait before it may try again (0: it may try now)."""
        entry = self.keys.get(key)
        if entry is None:
            return 0.0
        if now - entry.last > self.forget + self.max_delay:
            del self.keys[key]
            return 0.0
        over = entry.count - self.free
        if over <= 0:
            return 0.0
        delay = min(self.max_delay, self.first * 2.0 ** min(over - 1, 40))
        return max(0.0, entry.last + delay - now)

    def failed(self, key: Hashable, now: float) -> int:
        """Count a failure of ``key``; returns how many it has now."""
        entry = self.keys.get(key)
        if entry is None or now - entry.last > self.forget + self.max_delay:
            if len(self.keys) >= self.max_keys:
                self.sweep(now)
                if len(self.keys) >= self.max_keys:  # still full: forget the tenth quiet the longest, at once
                    for quiet in sorted(self.keys, key=lambda k: self.keys[k].last)[: self.max_keys // 10 + 1]:
                        del self.keys[quiet]
            entry = self.keys[key] = _Failures()
        entry.count += 1
        entry.last = now
        return entry.count

    def forgive(self, key: Hashable) -> None:
        """Forget the failures of ``key`` (it proved itself)."""
        self.keys.pop(key, None)

    def count(self, key: Hashable) -> int:
        """Failures of ``key`` remembered now."""
        entry = self.keys.get(key)
        return 0 if entry is None else entry.count

    def sweep(self, now: float) -> None:
        """Drop the keys whose failures are forgotten (memory stays bounded under a spray of names)."""
        for key in [k for k, e in self.keys.items() if now - e.last > self.forget + self.max_delay]:
            del self.keys[key]


Item = TypeVar("Item")


class FairQueue(Generic[Item]):
    """Work waiting per address, taken in turn: one address's hundred items never hold up another's one.

    ``push`` queues an item under its address; ``pop`` takes the oldest item of the next address in
    round-robin order, or None when nothing waits.
    """

    def __init__(self) -> None:
        self._queues: dict[str, deque[Item]] = {}
        self._turns: deque[str] = deque()

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def push(self, address: str, item: Item) -> None:
        """Queue ``item`` for ``address``."""
        queue = self._queues.get(address)
        if queue is None:
            queue = self._queues[address] = deque()
            self._turns.append(address)
        queue.append(item)

    def pop(self) -> Item | None:
        """The next item, taking addresses in turn."""
        while self._turns:
            address = self._turns.popleft()
            queue = self._queues[address]
            item = queue.popleft()
            if queue:
                self._turns.append(address)
            else:
                del self._queues[address]
            return item
        return None
