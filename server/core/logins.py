"""The hall's login desk: decides every login by the rule table, and keeps what proves an identity.

A plain object like the hall: it is told a login, the address it came from, who holds the name
now and the time, and answers with one :class:`Step` — refuse it, admit it, check its secret off
the event loop first, or look the name up in a shared database first. It keeps the claimed names,
the digest of every name's latest resume token, the names being claimed right now, and the
back-off of failed proofs (per address and name, per address, and for the organiser secret).
It never sends anything and never calls back into the hall.
"""

from __future__ import annotations

import hmac
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.games import COORDS
from protocol.messages import NAME_PATTERN, ErrorCode
from protocol.wording import name_refused

from .env import Env
from .house import HOUSE_PREFIX
from .identity import (
    REFUSAL_TEXT,
    Backoff,
    Claim,
    ClaimLookup,
    Holder,
    Proof,
    SecretCheck,
    Verdict,
    decide,
    refusal_text,
    same_secret,
    token_digest,
)
from .outbox import HallOutbox
from .refusals import Refusal

log = logging.getLogger("plyhall.logins")

NAME_HELP = "1 to 32 letters (a-z, A-Z: no accents), digits and _ . - (starting with a letter or digit)"
ORGANISER_WARN_AT = (3, 10, 30, 100, 300, 1000)  # failed organiser secrets from one address that are logged


@dataclass
class LoginLimits:
    """How failed proofs are paced, and how many secret checks one address may have waiting."""

    pair_free: int = 5  # failed proofs for one name from one address before each further try waits
    address_free: int = 30  # ... from one address, whatever the names
    organiser_free: int = 3  # wrong organiser secrets from one address before each further try waits
    max_delay: float = 300.0  # the longest wait (it doubles from 1 s with every further failure)
    checks_per_address: int = 64  # secret checks waiting or running for one address at once
    claims_free: int = 1000  # names claimed from one address in an hour before each further claim waits


@dataclass(frozen=True)
class Refuse:
    """Answer the login with an error."""

    code: str
    text: str
    retry_after: float | None = None


@dataclass(frozen=True)
class Admit:
    """Open the session: ``proven`` when a secret or token proved the identity; ``claim``: a new claim to store."""

    proven: bool
    claim: Claim | None = None


@dataclass(frozen=True)
class Check:
    """Run this secret check off the event loop, then hand its answer to :meth:`Logins.checked`."""

    check: SecretCheck


@dataclass(frozen=True)
class Lookup:
    """Look the name's claim up in the shared database, then start the login again."""

    lookup: ClaimLookup


Step = Refuse | Admit | Check | Lookup


@dataclass
class Logins:
    """Claims, resume tokens, names being claimed, and the back-off of failed proofs."""

    env: Env
    organiser_secret: str | None = None
    shared_names: bool = False  # other servers share the database: unknown names are looked up there
    limits: LoginLimits = field(default_factory=LoginLimits)
    claims: dict[str, Claim] = field(default_factory=dict)
    identities: dict[str, str] = field(default_factory=dict)  # name -> digest of its latest resume token
    claiming: dict[str, int] = field(default_factory=dict)  # name -> connection whose secret will claim it
    checking: dict[int, tuple[str, str]] = field(default_factory=dict)  # connection -> (address, name) in a check
    seat_free_in: Callable[[str, float], float | None] | None = None  # the hall's: seconds until a kept seat is free
    look_up_claims: bool = False  # the database may gain claims behind the hall's back (``plyhall names add`` on a
    # running server): a secret that would claim an unknown name looks the name up there first

    def __post_init__(self) -> None:
        self.house_secret = self.env.new_token()  # what the server's own bots log in with
        self.pairs = Backoff(free=self.limits.pair_free, max_delay=self.limits.max_delay)
        self.addresses = Backoff(free=self.limits.address_free, max_delay=self.limits.max_delay)
        self.organiser = Backoff(free=self.limits.organiser_free, max_delay=self.limits.max_delay)
        self.new_claims = Backoff(free=self.limits.claims_free, max_delay=self.limits.max_delay, forget=3600.0)
        self.pending: Counter[str] = Counter()  # address -> secret checks waiting or running
        self._pairs_checked: Counter[tuple[str, str]] = Counter()  # (address, name) -> checks waiting or running

    # The steps of a login ----------------------------------------------------------------------

    def answer(self, out: HallOutbox, conn: int, step: Step) -> Admit | None:
        """Carry out, for connection ``conn``, what this desk decided as far as it can: a refusal answered, a secret
        check or a name look-up queued for the I/O edge. An :class:`Admit` is returned: the hall opens the session."""
        if isinstance(step, Refuse):
            extra = {} if step.retry_after is None else {"retry_after": step.retry_after}
            if step.code in ("throttled", "busy"):
                out.refuse(conn, Refusal(f"login_{step.code}"), step.code, step.text, **extra)
            else:
                out.error(conn, step.code, step.text, **extra)
        elif isinstance(step, Check):
            out.checks.append(step.check)
        elif isinstance(step, Lookup):
            out.lookups.append(step.lookup)
        else:
            return step
        return None

    def start(self, conn: int, msg: Mapping[str, Any], address: str, holder: Holder, now: float,
              looked_up: bool = False) -> Step:
        """Decide a login for ``msg["name"]``, which ``holder`` holds now."""
        name, secret, token = msg["name"], msg.get("secret"), msg.get("resume")
        refused = self._malformed(msg)
        if refused is None and "organiser" in msg:
            refused = self._organiser(msg["organiser"], address, now)
        if refused is not None:
            return refused
        if name.casefold().startswith(HOUSE_PREFIX):
            return self._house(name, secret, address, now)
        if holder in (Holder.NOBODY, Holder.CLAIMING):
            self.forget(name)  # nobody holds the name: a token left from before proves nothing
        claim = self.claims.get(name)
        if self.token_matches(name, token):
            return self._proven(conn, msg, address, now, looked_up)
        if claim is None and not looked_up and (self.shared_names or (self.look_up_claims and secret is not None)):
            return self._lookup(conn, msg, address)  # claimed through another server, or registered, perhaps
        return self._decide(conn, msg, address, holder, now)

    def _malformed(self, msg: dict[str, Any]) -> Refuse | None:
        """A login whose name, convention or secret is not acceptable."""
        name, secret = msg["name"], msg.get("secret")
        if not re.fullmatch(NAME_PATTERN, name):  # fullmatch: '$' alone lets a trailing newline through
            return Refuse(ErrorCode.BAD_NAME, name_refused(name, "name", 32, NAME_HELP))
        coords = msg.get("coords", "algebraic")
        if coords not in COORDS:
            return Refuse(ErrorCode.BAD_MESSAGE, f"unknown coords {coords[:40]!r}; accepted: {', '.join(COORDS)}")
        if secret is not None and not 1 <= len(secret) <= 200:
            return Refuse(ErrorCode.BAD_MESSAGE, "a secret is 1 to 200 characters")
        return None

    def _proven(self, conn: int, msg: dict[str, Any], address: str, now: float, looked_up: bool) -> Step:
        """A login with the name's latest resume token: welcome (and a secret sent along claims an unclaimed name)."""
        name = msg["name"]
        self.pairs.forgive((address, name))
        if msg.get("secret") is None or name in self.claims:
            return Admit(proven=True)
        if (self.shared_names or self.look_up_claims) and not looked_up:
            return self._lookup(conn, msg, address)  # claimed through another server, or registered, perhaps
        return self._claim(conn, msg, address, now, proven=True)  # the owner claims the name it holds

    def _decide(self, conn: int, msg: dict[str, Any], address: str, holder: Holder, now: float) -> Step:
        """A login without a valid token: the rule table decides, and guesses at a claimed name are paced."""
        name, secret, token = msg["name"], msg.get("secret"), msg.get("resume")
        claim = self.claims.get(name)
        proof = Proof.SECRET if secret is not None else Proof.NOTHING
        verdict = decide(claim is not None, holder, proof)
        if verdict in (Verdict.CHECK, Verdict.WRONG_SECRET):  # a claimed name: guesses at its secret are paced
            wait = max(self.pairs.wait((address, name), now), self.addresses.wait(address, now))
            if wait:
                return Refuse(ErrorCode.THROTTLED, f"too many failed logins for {name} from your address; try again in "
                              f"{math.ceil(wait)} s (or log in with your resume token)", round(wait, 1))
        if verdict.refused:
            if verdict is Verdict.WRONG_SECRET or token is not None:  # a guess (of a secret, or of a token)
                self._failed(name, address, now)
            log.info("login refused (%s): %s from %s", verdict.value, name, address)
            free_in = self.seat_free_in(name, now) if self.seat_free_in is not None and holder is Holder.SEAT and \
                proof is Proof.NOTHING else None  # a bot restarted too soon: told the time actually left
            return Refuse(verdict.value, refusal_text(verdict, name, holder, proof, free_in),
                          None if free_in is None else round(free_in, 1))
        if verdict is Verdict.ADMIT:
            return Admit(proven=False)
        if verdict is Verdict.CLAIM:
            return self._claim(conn, msg, address, now)
        return self._check(conn, msg, address, claim)  # Verdict.CHECK

    def _lookup(self, conn: int, msg: dict[str, Any], address: str) -> Step:
        """Look a name up in the shared database (a read on a small thread pool: counted like a secret check)."""
        if self.pending[address] >= self.limits.checks_per_address:
            return Refuse(ErrorCode.BUSY, f"{self.pending[address]} logins from your address are being checked; try "
                          "again in a moment", 1.0)
        self.pending[address] += 1
        self.checking[conn] = (address, msg["name"])
        return Lookup(ClaimLookup(conn, msg))

    def looked_up(self, conn: int) -> None:
        """A lookup of :meth:`_lookup` came back (the login then starts again)."""
        address, _ = self.checking.pop(conn, ("", ""))
        self.pending[address] -= 1
        if self.pending[address] <= 0:
            del self.pending[address]

    def _house(self, name: str, secret: str | None, address: str, now: float) -> Step:
        """A login under a house bot's name: only the server's own processes know the secret."""
        wait = self.addresses.wait(address, now)
        if wait:
            return Refuse(ErrorCode.THROTTLED, f"too many failed logins from your address; try again in "
                          f"{math.ceil(wait)} s",
                          round(wait, 1))
        if name.startswith(HOUSE_PREFIX) and secret is not None and same_secret(secret, self.house_secret):
            return Admit(proven=True)
        if secret is not None:
            self._failed(name, address, now)
        return Refuse(ErrorCode.BAD_NAME, f"names starting with {HOUSE_PREFIX} belong to this server's own bots; "
                      "choose another name")

    def _claim(self, conn: int, msg: dict[str, Any], address: str, now: float, proven: bool = False) -> Step:
        """Hash a secret that claims a name, unless this address has claimed many names lately (each claim is a
        row kept for good)."""
        wait = self.new_claims.wait(address, now)
        if wait:
            return Refuse(ErrorCode.THROTTLED, f"many names were claimed from your address lately; try again in "
                          f"{math.ceil(wait)} s", round(wait, 1))
        return self._check(conn, msg, address, None, proven)

    def checked(self, check: SecretCheck, result: Claim | bool | None, holder: Holder, now: float,
                alive: bool = True) -> Step:
        """The answer of a secret check: admit or refuse the login (``holder``: who holds the name now,
        leaving out this login's own claim; ``alive``: False when the connection closed meanwhile, and
        then only the failure counts; ``result`` None: the check was dropped unrun, for the same reason)."""
        name, address = check.login["name"], check.address
        self.checking.pop(check.conn, None)
        for counter, key in ((self.pending, address), (self._pairs_checked, (address, name))):
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]
        if self.claiming.get(name) == check.conn:
            del self.claiming[name]
        if result is None:  # never run: its connection closed while it waited
            return Refuse(ErrorCode.NOT_LOGGED_IN, "the connection closed before its login was checked")
        if result is False:
            self._failed(name, address, now)
            log.info("login refused: wrong secret for %s from %s", name, address)
            return Refuse(ErrorCode.WRONG_SECRET, refusal_text(Verdict.WRONG_SECRET, name, holder, Proof.SECRET))
        self.pairs.forgive((address, name))
        if not alive:
            return Refuse(ErrorCode.NOT_LOGGED_IN, "the connection closed before its login was checked")
        if not isinstance(result, Claim):
            return Admit(proven=True)
        if name in self.claims:
            return Refuse(ErrorCode.NAME_IN_USE, f"{name} was just claimed by another login; choose another name")
        if check.proven:
            if not self.token_matches(name, check.login.get("resume")):  # another login took over meanwhile
                return Refuse(ErrorCode.NAME_IN_USE, f"{name} was taken over by another login while the secret was "
                              "hashed")
        elif holder is not Holder.NOBODY:
            return Refuse(ErrorCode.NAME_IN_USE,
                          REFUSAL_TEXT[Verdict.NAME_IN_USE].format(name=name, holder=holder.value))
        self.claims[name] = result
        self.new_claims.failed(address, now)  # not a failure: a claim, paced like one past claims_free an hour
        return Admit(proven=True, claim=result)

    def gone(self, conn: int) -> None:
        """The connection closed: a claim it was making no longer holds the name."""
        for name in [n for n, c in self.claiming.items() if c == conn]:
            del self.claiming[name]

    # Identities -------------------------------------------------------------------------------

    def issue(self, name: str) -> tuple[str, str]:
        """A new resume token for ``name`` (the only one that works from now on): the token and its digest."""
        token = self.env.new_token()
        self.identities[name] = token_digest(token)
        return token, self.identities[name]

    def token_matches(self, name: str, token: str | None) -> bool:
        """True when ``token`` is ``name``'s latest resume token."""
        digest = self.identities.get(name)
        return token is not None and digest is not None and hmac.compare_digest(digest, token_digest(token))

    def known(self, name: str) -> bool:
        """True when somebody has proved to be ``name`` (it has a resume token)."""
        return name in self.identities

    def restore(self, claims: dict[str, tuple[str, str]]) -> None:
        """After a restart: the stored claims (name -> salt and digest)."""
        self.claims = {name: Claim(salt, digest) for name, (salt, digest) in claims.items()}

    def learn_claim(self, name: str, claim: Claim) -> None:
        """A claim found in a shared database (another server's)."""
        self.claims.setdefault(name, claim)

    def take_back(self, name: str, identities: dict[str, str]) -> None:
        """After a restart: ``name`` holds something again, so its stored token (if any) proves it again."""
        if name in identities:
            self.identities[name] = identities[name]

    def forget(self, name: str) -> bool:
        """Nobody holds ``name`` any more: its token proves nothing from now on. True when it had one."""
        return self.identities.pop(name, None) is not None

    # Internals --------------------------------------------------------------------------------

    def _check(self, conn: int, msg: dict[str, Any], address: str, claim: Claim | None,
               proven: bool = False) -> Step:
        name = msg["name"]
        if (address, name) in self._pairs_checked:
            return Refuse(ErrorCode.THROTTLED, f"a login for {name} from your address is being checked; wait for its "
                          "answer",
                          1.0)
        if self.pending[address] >= self.limits.checks_per_address:
            return Refuse(ErrorCode.BUSY, f"{self.pending[address]} logins from your address are being checked; try "
                          "again in a moment", 1.0)
        self.pending[address] += 1
        self.checking[conn] = (address, name)
        self._pairs_checked[(address, name)] += 1
        if claim is None:
            self.claiming[name] = conn
        return Check(SecretCheck(conn, msg, claim, address, proven))

    def _failed(self, name: str, address: str, now: float) -> None:
        self.pairs.failed((address, name), now)
        count = self.addresses.failed(address, now)
        if count == self.limits.address_free + 1:
            log.warning("logins from %s are being slowed down: %d failed proofs (the latest for %s)", address,
                        count, name)

    def _organiser(self, secret: str, address: str, now: float) -> Refuse | None:
        wait = self.organiser.wait(address, now)
        if wait:
            return Refuse(ErrorCode.THROTTLED, f"too many wrong organiser secrets from your address; try again in "
                          f"{math.ceil(wait)} s", round(wait, 1))
        if self.organiser_secret is not None and same_secret(secret, self.organiser_secret):
            self.organiser.forgive(address)
            return None
        count = self.organiser.failed(address, now)
        if count in ORGANISER_WARN_AT:
            log.warning("organiser login refused: %d wrong organiser secrets from %s", count, address)
        return Refuse(ErrorCode.NOT_ORGANISER, "the organiser secret is wrong (or this server has none: plyhall serve "
                      "--organiser-secret)")

