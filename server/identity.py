"""Who a login is: claimed names (a salted PBKDF2 hash of the secret), resume tokens, and the
throttle on failed logins.

Checking a secret costs PBKDF2 (milliseconds of CPU), so the hall never does it itself: it
hands the I/O layer a :class:`SecretCheck`, which runs off the event loop and whose answer is
fed back (``Hall.secret_checked``). A resume token is a random value given in every
``welcome``; only its SHA-256 is kept, and checking it is cheap.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from dataclasses import dataclass, field
from typing import Any

HASH_ITERATIONS = 20_000


def _pbkdf2(secret: str, salt: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt.encode(), HASH_ITERATIONS).hex()


def token_digest(token: str) -> str:
    """The stored form of a resume token."""
    return hashlib.sha256(token.encode()).hexdigest()


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
        """True when ``secret`` is the claimed one (slow: PBKDF2)."""
        return hmac.compare_digest(self.digest, _pbkdf2(secret, self.salt))


@dataclass
class SecretCheck:
    """A login waiting for its secret to be checked (or a new claim to be hashed) off the event loop."""

    conn: int
    login: dict[str, Any]
    claim: Claim | None  # None: the name is unclaimed and the secret claims it

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


@dataclass
class _Failures:
    count: int = 0
    last: float = -math.inf
    pending: int = 0


@dataclass
class LoginThrottle:
    """Growing delays after failed logins, per name and per address, then a temporary lockout.

    ``free`` failures cost nothing; each further one doubles the wait (from 1 s up to
    ``max_delay``); ``lockout_after`` failures lock the key out for ``lockout`` seconds. A key's
    failures are forgotten after ``forget`` quiet seconds or, for a name, a successful login.
    At most ``max_pending`` checks of one key run at once.
    """

    free: int
    lockout_after: int
    max_pending: int
    max_delay: float = 60.0
    lockout: float = 300.0
    forget: float = 900.0
    keys: dict[str, _Failures] = field(default_factory=dict)

    def retry_after(self, key: str, now: float) -> float | None:
        """Seconds to wait before ``key`` may try again, or None when it may try now."""
        entry = self.keys.get(key)
        if entry is None:
            return None
        if now - entry.last > self.forget and not entry.pending:
            del self.keys[key]
            return None
        if entry.pending >= self.max_pending:
            return 1.0
        over = entry.count - self.free
        if over <= 0:
            return None
        wait = self.lockout if entry.count >= self.lockout_after else min(self.max_delay, 2.0 ** (over - 1))
        left = entry.last + wait - now
        return left if left > 0 else None

    def started(self, key: str) -> None:
        """A check of ``key`` is running."""
        self.keys.setdefault(key, _Failures()).pending += 1

    def finished(self, key: str, now: float, ok: bool, forgive: bool = False) -> None:
        """A check of ``key`` ended: a failure counts; a success with ``forgive`` forgets the failures."""
        entry = self.keys.setdefault(key, _Failures())
        entry.pending = max(0, entry.pending - 1)
        if ok:
            if forgive and not entry.pending:
                self.keys.pop(key, None)
            return
        entry.count += 1
        entry.last = now

    def failed(self, key: str, now: float) -> None:
        """A failure decided without a check (a missing secret, a wrong token)."""
        self.started(key)
        self.finished(key, now, ok=False)
