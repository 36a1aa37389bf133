"""Swiss pairing: each round paired from the results of the rounds before.

:func:`swiss_pairings` pairs one round (a simplified Dutch system, searched
with backtracking and a look-ahead over the rounds still to come; its
docstring gives the rules); :func:`swiss_rounds` pairs every round that can be
paired now, as the schedule of a Swiss event needs. Plain functions of the
entrants, the results and the pairings so far, deterministic: the same inputs
give the same pairings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .pairing import Pairing, ScheduleError
from .results import ScoredGame


@dataclass
class _Record:
    """What Swiss pairing knows of an entrant: score, opponents met, pairing colours, byes."""

    seed: int
    score: float = 0.0
    opponents: Counter[str] = field(default_factory=Counter)
    colours: str = ""  # one letter per paired round: "W" or "B"
    byes: int = 0

    @property
    def balance(self) -> int:
        """Whites minus blacks (pairing colours)."""
        return self.colours.count("W") - self.colours.count("B")

    @property
    def colour_wish(self) -> int:
        """+1 wants white, -1 wants black, 0 either: the colour that evens the balance, else the alternate one."""
        if self.balance:
            return -1 if self.balance > 0 else 1
        return {"W": -1, "B": 1}.get(self.colours[-1:], 0)


_SEARCH_BUDGET = 20_000
"""Pairing search steps per level (every bye candidate's search together) before a stricter level is given up."""

_LOOK_AHEAD_BUDGET = 50_000
"""Look-ahead steps per level (all its checks together) before the level is given up."""

_FULL_BUDGET_FIELD = 32
"""Fields up to this size get the whole budgets; a bigger field, whose steps each cost more, a share of them in
inverse proportion, so that pairing a round costs about as much at any size (the hall waits for it)."""


def _budgets(count: int) -> tuple[int, int]:
    """The search's and the look-ahead's step budgets of one level for a field of ``count`` entrants."""
    if count <= _FULL_BUDGET_FIELD:
        return _SEARCH_BUDGET, _LOOK_AHEAD_BUDGET
    # never fewer search steps than a field's pairs take in one go: the last level (repeats allowed) always pairs
    return (max(4 * count, _SEARCH_BUDGET * _FULL_BUDGET_FIELD // count),
            _LOOK_AHEAD_BUDGET * _FULL_BUDGET_FIELD // count)


class _OutOfBudget(Exception):
    pass


def _missing_results(pairings: Sequence[Pairing], results: Sequence[ScoredGame], round_no: int,
                     per_pairing: int) -> list[str]:
    """The pairings of ``round_no`` still short of results (``"alice - bob"``, one per missing game)."""
    done: Counter[frozenset[str]] = Counter(
        frozenset((r.white, r.black)) for r in results if r.round == round_no and not r.is_bye
    )
    missing = []
    for p in pairings:
        if p.round == round_no and p.black is not None:
            missing += [f"{p.white} - {p.black}"] * max(0, per_pairing - done[frozenset((p.white, p.black))])
    return missing


def swiss_pairings(entrants: Sequence[str], results: Iterable[ScoredGame], round_no: int, *,
                   games_per_pairing: int = 2, previous: Sequence[Pairing] | None = None,
                   rounds: int | None = None) -> list[Pairing]:
    """The pairings of Swiss round ``round_no`` (from 1), given every result of the rounds before.

    ``previous`` are the pairings of rounds 1 .. round_no-1 as they were made;
    without it they are paired again from ``results`` (the same inputs give
    the same pairings). Each earlier round must have all its
    ``games_per_pairing`` results per pairing (``ScoredGame.round`` set),
    else ``ScheduleError`` lists the missing games.

    The method is a simplified Dutch system (FIDE Handbook C.04.3), searched
    with backtracking:

    * entrants are ranked by score, then seed (their order in ``entrants``);
      a previous bye counts N points whether or not its results are passed;
    * with an odd count the bye goes to the lowest-ranked entrant who has not
      had one (never twice to the same entrant) and leaves a pairable field;
    * the highest-ranked unpaired entrant is paired first, preferring the
      opponent half a score group below it (1-5, 2-6, 3-7, 4-8 in a group of
      eight), then the rest of its score group, then the highest-ranked of
      the groups below (floating down); no two entrants meet twice;
    * the pairing's white is the entrant with fewer whites than blacks, else
      the one who had black last time, else the higher-ranked entrant's
      alternate colour (in round 1 the higher seed has white on odd boards);
      no colour difference beyond 2 and no colour three times running.

    With ``rounds`` (the event's number of rounds) the search also looks
    ahead: it avoids a pairing after which the next round could not keep the
    colour rules, or the remaining rounds could not be paired without a
    repeat (a danger only with more rounds than half the field); see
    ``_completable``.

    When no pairing meets every rule, the look-ahead is dropped first, then
    the colour rules, and only if no pairing without a repeat exists at all
    the fewest repeats are allowed. In practice (a trial of about 2,700 random
    events of 5 to 12 entrants at every round count) no pairing repeats up to
    the most rounds the spec allows, and the colour rules hold whenever fewer rounds
    are played; with every possible round played the last rounds are forced
    (each entrant meets the only ones left) and colours may have to give way.
    Byes come last in the list, on the last board.
    """
    entrants = _check_round(entrants, round_no, rounds)
    results = list(results)
    previous = _pairings_before(entrants, results, round_no, games_per_pairing, previous, rounds)
    records = _swiss_records(entrants, results, previous, round_no, games_per_pairing)
    ranked = sorted(entrants, key=lambda name: (-records[name].score, records[name].seed))
    for strict, ahead, colour_ahead in _search_levels(len(entrants), round_no, rounds):
        pairings = _pair_round(entrants, ranked, records, round_no, strict, ahead, colour_ahead)
        if pairings is not None:
            return pairings
    raise AssertionError("unreachable: repeats allowed always pair")  # pragma: no cover


def swiss_rounds(entrants: Sequence[str], results: Sequence[ScoredGame], rounds: int,
                 games_per_pairing: int, known: Sequence[Pairing] = ()) -> list[Pairing]:
    """The pairings of every Swiss round that can be paired now: round 1, then each following round as soon as
    the round before has all its results (``rounds`` rounds at most).

    ``known``: pairings this function gave before for fewer of these results. A round found there is taken as
    it is, not paired again: pairing is deterministic and a round's pairing depends only on the results of the
    rounds before it, which are complete once it is paired. So a result that completes no round costs no
    pairing at all, and one that completes a round costs the next round's pairing only."""
    made: dict[int, list[Pairing]] = {}
    for pairing in known:
        made.setdefault(pairing.round, []).append(pairing)
    pairings: list[Pairing] = []
    for round_no in range(1, rounds + 1):
        if round_no > 1 and _missing_results(pairings, results, round_no - 1, games_per_pairing):
            break
        pairings.extend(made.get(round_no) or swiss_pairings(entrants, results, round_no,
                                                             games_per_pairing=games_per_pairing,
                                                             previous=pairings, rounds=rounds))
    return pairings


def _check_round(entrants: Sequence[str], round_no: int, rounds: int | None) -> list[str]:
    """The entrants as a list; ``ScheduleError`` for a bad round number, field or number of rounds."""
    if isinstance(round_no, bool) or not isinstance(round_no, int) or round_no < 1:
        raise ScheduleError(f"round numbers start at 1, not {round_no!r}")
    entrants = list(entrants)
    if len(set(entrants)) != len(entrants) or len(entrants) < 2:
        raise ScheduleError("a swiss round needs at least 2 entrants, each listed once")
    if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < round_no):
        raise ScheduleError(f"rounds is the event's number of rounds (at least {round_no}), not {rounds!r}")
    return entrants


def _pairings_before(entrants: list[str], results: list[ScoredGame], round_no: int, per_pairing: int,
                     previous: Sequence[Pairing] | None, rounds: int | None) -> list[Pairing]:
    """The pairings of rounds 1 .. round_no-1: ``previous`` as they were made, or paired again from ``results``."""
    if previous is None:
        previous = []
        for earlier in range(1, round_no):
            previous += swiss_pairings(entrants, results, earlier, games_per_pairing=per_pairing,
                                       previous=previous, rounds=rounds)
    previous = [p for p in previous if p.round < round_no]
    if {p.round for p in previous} != set(range(1, round_no)):
        raise ScheduleError(f"round {round_no} needs the pairings of every round before it")
    return previous


def _search_levels(count: int, round_no: int, rounds: int | None) -> list[tuple[bool | None, int, bool]]:
    """The pairing attempts, strictest first: (colour rules kept, rounds checked ahead, next round's colours
    checked too). ``strict`` None allows repeats: that level always pairs."""
    rounds_after = 0 if rounds is None else rounds - round_no
    vertices = count + count % 2  # an odd field gets a phantom entrant: meeting it is the bye
    deep = rounds_after if rounds is not None and rounds > vertices // 2 else 0
    levels: list[tuple[bool | None, int, bool]] = []
    if rounds_after:
        levels.append((True, max(deep, 1), True))
    if deep:
        levels.append((False, deep, False))
    return levels + [(True, 0, False), (False, 0, False), (None, 0, False)]


def _pair_round(entrants: list[str], ranked: list[str], records: dict[str, _Record], round_no: int,
                strict: bool | None, ahead: int, colour_ahead: bool) -> list[Pairing] | None:
    """Round ``round_no`` paired at one level of :func:`_search_levels`, trying each bye candidate in turn;
    ``None`` when no pairing meets that level's rules (or the search runs out of budget)."""
    search_steps, look_ahead_steps = _budgets(len(entrants))
    budget = [look_ahead_steps]  # shared by every bye candidate of this level
    steps = [search_steps]  # so is this: an odd field's candidates do not each get a search of their own
    for bye in _bye_candidates(ranked, records):
        field_ = [name for name in ranked if name != bye]

        def accept(pairs: list[tuple[str, str]], bye: str | None = bye) -> bool:
            try:
                return _completable(entrants, records, pairs, bye, ahead, colour_ahead, budget)
            except RecursionError:  # a look-ahead nests a call a pair of each round to come: too deep for a big
                raise _OutOfBudget from None  # field with many rounds left, so it is given up as one out of budget

        try:
            pairs = _pair_field(field_, records, strict, accept if ahead else None, steps)
        except _OutOfBudget:
            pairs = None
        if pairs is not None:
            pairings = [Pairing(round_no, board, w, b) for board, (w, b) in enumerate(pairs, start=1)]
            if bye is not None:
                pairings.append(Pairing(round_no, len(pairs) + 1, bye, None))
            return pairings
    return None


def _swiss_records(entrants: Sequence[str], results: Sequence[ScoredGame], previous: Sequence[Pairing],
                   round_no: int, per_pairing: int) -> dict[str, _Record]:
    """Scores, opponents, colours and byes before ``round_no``; checks the results against the pairings."""
    records = {name: _Record(seed) for seed, name in enumerate(entrants)}
    expected: Counter[tuple[int, frozenset[str]]] = Counter()
    for p in sorted(previous, key=lambda p: (p.round, p.board)):
        for name in (p.white, p.black):
            if name is not None and name not in records:
                raise ScheduleError(f"{name!r} was paired in round {p.round} but is not an entrant")
        if p.black is None:
            records[p.white].byes += 1
            records[p.white].score += per_pairing
            continue
        expected[(p.round, frozenset((p.white, p.black)))] += per_pairing
        records[p.white].opponents[p.black] += 1
        records[p.black].opponents[p.white] += 1
        records[p.white].colours += "W"
        records[p.black].colours += "B"
    counted: Counter[tuple[int, frozenset[str]]] = Counter()
    for r in results:
        if r.is_bye or r.round is None or r.round >= round_no:
            continue
        key = (r.round, frozenset((r.white, r.black)))
        counted[key] += 1
        if counted[key] > expected[key]:
            raise ScheduleError(f"the result {r.white} - {r.black} in round {r.round} does not belong to that "
                                "round's pairings (or there are more results than games)")
        records[r.white].score += r.score(r.white)
        records[r.black].score += r.score(r.black)
    missing = [f"{' - '.join(sorted(key[1]))} (round {key[0]})"
               for key, count in sorted(expected.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1])))
               if counted[key] < count]
    if missing:
        raise ScheduleError(f"round {round_no} cannot be paired before every game of the rounds before it has a "
                            f"result; missing: {', '.join(missing)}")
    return records


def _bye_candidates(ranked: Sequence[str], records: dict[str, _Record]) -> list[str | None]:
    """Who may get the bye, lowest-ranked first: those with the fewest byes so far (none, if possible)."""
    if len(ranked) % 2 == 0:
        return [None]
    fewest = min(records[name].byes for name in ranked)
    return [name for name in reversed(ranked) if records[name].byes == fewest]


def _pair_field(ranked: list[str], records: dict[str, _Record], strict: bool | None,
                accept: Callable[[list[tuple[str, str]]], bool] | None,
                steps: list[int]) -> list[tuple[str, str]] | None:
    """Pair an even, ranked field by backtracking; ``None`` when no pairing meets the rules.

    ``strict``: True keeps the colour rules, False drops them (no repeat
    either way), None allows repeats (fewest first). ``accept`` may refuse a
    complete pairing (the look-ahead). ``steps[0]``: the search steps left
    (shared with the level's other searches); ``_OutOfBudget`` when they run out.
    """

    def search(remaining: list[str], chosen: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
        if not remaining:
            return chosen if accept is None or accept(chosen) else None
        steps[0] -= 1
        if steps[0] < 0:
            raise _OutOfBudget
        top, rest = remaining[0], remaining[1:]
        for other in _opponent_order(top, rest, records, repeats=strict is None):
            colours = _colours(top, other, records, board=len(chosen), strict=bool(strict))
            if colours is None:
                continue
            found = search([name for name in rest if name != other], [*chosen, colours])
            if found is not None:
                return found
        return None

    return search(ranked, [])


def _completable(entrants: Sequence[str], records: dict[str, _Record], pairs: list[tuple[str, str]],
                 bye: str | None, rounds_after: int, colours: bool, budget: list[int]) -> bool:
    """Whether ``rounds_after`` more rounds can follow this one with no repeat pairing and no second bye.

    Each round is a perfect matching of the graph of pairings not yet played
    (an odd field gets a phantom vertex whose edges are the byes), so this
    searches for that many disjoint matchings; with ``colours`` the next
    round's pairings must also be able to keep the colour rules. The search
    spends ``budget[0]`` steps, shared by all the checks of one pairing
    attempt; when it runs out the attempt is given up (``_OutOfBudget``).
    """
    phantom = ""  # not a valid entrant name, so it cannot clash
    vertices = list(entrants) + ([phantom] if len(entrants) % 2 else [])
    free = _unplayed(entrants, records, pairs, bye, vertices, phantom)
    history = {name: records[name].colours for name in entrants}
    for white, black in pairs:
        history[white] += "W"
        history[black] += "B"

    def colour_ok(v: str, w: str) -> bool:
        if phantom in (v, w):
            return True
        return any(_colours_allowed(history[x], history[y]) for x, y in ((v, w), (w, v)))

    return _disjoint_matchings(vertices, free, rounds_after, colour_ok if colours else None, budget)


def _unplayed(entrants: Sequence[str], records: dict[str, _Record], pairs: list[tuple[str, str]], bye: str | None,
              vertices: list[str], phantom: str) -> dict[str, set[str]]:
    """Each vertex's possible opponents: those it has not met yet (nor in ``pairs``, this round's pairing); an
    entrant who had a bye has met the phantom."""
    played = {frozenset(p) for p in pairs}
    if bye is not None:
        played.add(frozenset((bye, phantom)))
    for name in entrants:
        played.update(frozenset((name, other)) for other in records[name].opponents)
        if records[name].byes:
            played.add(frozenset((name, phantom)))
    return {v: {w for w in vertices if w != v and frozenset((v, w)) not in played} for v in vertices}


def _disjoint_matchings(vertices: list[str], free: dict[str, set[str]], left: int,
                        colour_ok: Callable[[str, str], bool] | None, budget: list[int]) -> bool:
    """Whether ``left`` disjoint perfect matchings of the graph ``free`` exist, the first one made only of pairs
    ``colour_ok`` allows (when given). Spends ``budget[0]``; ``_OutOfBudget`` when it runs out."""
    if left == 0:
        return True

    def match(unmatched: set[str], taken: list[frozenset[str]]) -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfBudget
        if not unmatched:
            rest = {v: ws - {w for pair in taken if v in pair for w in pair} for v, ws in free.items()}
            return _disjoint_matchings(vertices, rest, left - 1, None, budget)
        vertex = min(unmatched, key=lambda v: (len(free[v] & unmatched), v))
        for other in sorted(free[vertex] & unmatched):
            if colour_ok is not None and not colour_ok(vertex, other):
                continue
            if match(unmatched - {vertex, other}, [*taken, frozenset((vertex, other))]):
                return True
        return False

    return match(set(vertices), [])


def _colours_allowed(white: str, black: str) -> bool:
    """Whether entrants with these colour histories may take white and black next: no difference beyond 2,
    no colour three times running."""
    balance_white = white.count("W") - white.count("B")
    balance_black = black.count("W") - black.count("B")
    return not (balance_white >= 2 or balance_black <= -2 or white.endswith("WW") or black.endswith("BB"))


def _opponent_order(top: str, rest: list[str], records: dict[str, _Record], repeats: bool) -> list[str]:
    """``top``'s candidate opponents, best first: half its score group down, the group, then lower groups."""
    score = records[top].score
    # top heads its score group G = [top, *same]; the Dutch ideal is G[len(G) // 2], then down the group's
    # lower half, then back up its upper half, then the groups below in rank order
    same = [name for name in rest if records[name].score == score]
    half = (len(same) + 1) // 2
    upper, lower = same[: max(half - 1, 0)], same[max(half - 1, 0):]
    # within the group, an opponent wanting the other colour comes first (the Dutch system's exchanges in S2)
    wish = records[top].colour_wish
    group = sorted(lower + upper[::-1], key=lambda name: wish != 0 and records[name].colour_wish == wish)
    order = group + [name for name in rest if records[name].score != score]
    if not repeats:
        return [name for name in order if records[top].opponents[name] == 0]
    return sorted(order, key=lambda name: records[top].opponents[name])  # stable: keeps the preference order


def _colours(a: str, b: str, records: dict[str, _Record], board: int, strict: bool) -> tuple[str, str] | None:
    """(white, black) for ``a`` (ranked higher) and ``b``; ``None`` if ``strict`` and both ways break a rule."""
    ra, rb = records[a], records[b]
    if ra.balance != rb.balance:
        white_first = ra.balance < rb.balance
    elif ra.colours[-1:] != rb.colours[-1:]:
        white_first = ra.colours[-1:] == "B" or rb.colours[-1:] == "W"
    elif ra.colours:
        white_first = ra.colours[-1] == "B"  # the higher-ranked entrant gets its alternate colour
    else:
        white_first = board % 2 == 0
    options = [(a, b), (b, a)] if white_first else [(b, a), (a, b)]
    if not strict:
        return options[0]
    for white, black in options:
        if _colours_allowed(records[white].colours, records[black].colours):
            return white, black
    return None
