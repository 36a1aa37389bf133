"""The commands' checks of what they are given, run in this process (the fast tier): a mistake is one clear line
on standard error and exit code 2 (1 for a file that is not there), before anything starts; and the commands that
only work on database files (names, db copy). The slow tests run the same commands as processes
(tests/test_serve_cli.py, test_workers.py, test_sdk.py, test_cosc322_tournament.py, test_rating_abuse.py,
test_storage.py); these keep their logic in the fast tier."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from plyhall.cli import main

REDIS = "redis://127.0.0.1:6379/0"
PG = "postgresql://plyhall@127.0.0.1/plyhall"


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Run in an empty folder, without the PLYHALL_ variables that give the commands defaults."""
    for name in ("PLYHALL_NODE", "PLYHALL_CLUSTER", "PLYHALL_DB", "PLYHALL_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    """``plyhall ARGV`` in this process: its exit code and its lines on standard error (argparse's exit too)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err.strip().splitlines()


CLUSTER_MISTAKES = [
    (["--workers", "2"],
     "--workers 2 starts 2 nodes of one cluster on this machine: give --cluster redis://HOST:PORT/DB"),
    (["--workers", "2", "--cluster", REDIS, "--node", "w", "--db", "games.db"],
     "--cluster needs the PostgreSQL database every node shares: --db postgresql://USER:PASSWORD@HOST/DBNAME, "
     "not 'games.db'"),
    (["--cluster", REDIS, "--node", "w", "--db", "sqlite:///games.db"],
     "--cluster needs the PostgreSQL database every node shares"),
    (["--workers", "2", "--cluster", REDIS, "--node", "w", "--db", PG, "--port", "0"],
     "--port 0 picks a free port for each process, but the --workers 2 share one port"),
    (["--cluster", "http://ann:hunter22@redis.example/0", "--node", "w", "--db", PG],
     "--cluster must be the URL of the cluster's Redis: redis://HOST:PORT/DB, rediss://HOST:PORT/DB (TLS) or "
     "unix:///PATH/redis.sock, not http://..."),
    (["--cluster", REDIS, "--db", PG],
     "--cluster: every node of a cluster needs its own --node NAME (or $PLYHALL_NODE), not the default main"),
    (["--workers", "65", "--cluster", REDIS, "--node", "w", "--db", PG], "--workers must be 1 to 64 processes, not 65"),
]
"""The cluster options' mistakes and serve's one line for each (tests/test_workers.py runs them as processes too)."""


@pytest.mark.parametrize(("options", "message"), [
    (["--port", "70000"], "--port must be 0 to 65535, not 70000"),
    (["--grace", "601"], "--grace must be 0 to 600 seconds, not 601"),
    (["--per-move", "0.01"], "--per-move must be 0.05 to 86400 seconds, not 0.01"),
    (["--organiser-secret", "short"], "--organiser-secret must be 8 to 200 characters"),
    (["--organiser-secret", ""], "--organiser-secret is empty (is the shell variable set?); it must be 8 to 200 "
                                 "characters"),
    (["--node", "a b"], "--node must be 1 to 64 letters, digits and _ . -, not 'a b'"),
    (["--house-bots", "65"], "--house-bots must be 0 to 64 bot processes, not 65"),
    (["--analysis-workers", "0"], "--analysis-workers must be 1 to 16 processes, not 0"),
    *CLUSTER_MISTAKES,
])
def test_serve_says_each_bad_option_in_one_line_and_starts_nothing(capsys, clean: Path, options: list[str],
                                                                   message: str) -> None:
    code, errors = run(capsys, "serve", *options)
    errors = [line for line in errors if line.startswith("plyhall serve: ")]
    assert code == 2 and len(errors) == 1 and message in errors[0], errors  # one mistake, one message
    assert "hunter22" not in " ".join(errors)  # a URL's password is never echoed
    assert not list(clean.iterdir())  # no database was created


def test_analyse_finds_a_tournament_by_its_name_and_says_which_there_are(capsys, clean: Path) -> None:
    """``plyhall analyse --tournament Cup`` said 'no finished games of a tournament 'Cup'' of a tournament with 12
    (its id is cup): it takes the name as export does, and names the tournaments there are when none matches."""
    import json

    from server.storage import open_storage
    from server.storage.records import AnalysisSaved, GameEnded, MovePlayed, TournamentSaved
    from tests.helpers import game_record

    analysis = {"version": 2, "nodes": 1000, "moves": [], "summary": {}}  # stored: read back, not analysed again
    storage = open_storage(str(clean / "cup.db"))
    played = game_record("g1", tournament="spring-cup")
    storage.apply([TournamentSaved({"id": "spring-cup", "name": "Spring Cup", "status": "finished",
                                    "created_at": 50.0}),
                   GameEnded(played), *(MovePlayed("g1", move) for move in played.moves),
                   AnalysisSaved("g1", analysis)])
    storage.close()
    for key in ("spring-cup", "Spring Cup"):
        assert main(["analyse", "--db", "cup.db", "--tournament", key, "--json"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert [json.loads(line)["id"] for line in out] == ["g1"], out
    code, errors = run(capsys, "analyse", "--db", "cup.db", "--tournament", "Autumn")
    assert code == 1 and errors == ["plyhall analyse: no tournament 'Autumn' in cup.db; its tournaments: spring-cup "
                                    "(Spring Cup)"], errors


def test_serve_help_says_how_long_the_organiser_secret_must_be(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    option = text[text.index("--organiser-secret ORGANISER_SECRET secret"):]  # its help, not the usage line
    assert "8 to 200 characters" in option[:option.index("--house-bots")], option


def test_serve_says_every_mistake_at_once(capsys) -> None:
    code, errors = run(capsys, "serve", "--port", "-1", "--grace", "700", "--house-bots", "-1")
    assert code == 2
    assert [line.split(":")[1].split()[0] for line in errors] == ["--port", "--grace", "--house-bots"], errors


def test_serve_in_a_folder_that_does_not_exist_says_so(capsys, clean: Path) -> None:
    code, errors = run(capsys, "serve", "--db", str(clean / "no" / "x.db"))
    assert code == 1 and len(errors) == 1 and "does not exist" in errors[0], errors


def test_serve_given_a_folder_or_a_file_s_folder_says_so_and_creates_nothing(capsys, clean: Path) -> None:
    """A folder for --db (with or without its final slash) used to create a file of that name (the slash dropped)
    and fail as 'cannot listen on 127.0.0.1:PORT: Not a directory'."""
    (clean / "games").mkdir()
    (clean / "notes.txt").write_text("mine")
    for db, words in ((f"{clean / 'games'}", "is a folder; give a file's path, e.g. "),
                      (f"{clean / 'made'}/", "is a folder; give a file's path, e.g. "),
                      (f"{clean / 'notes.txt' / 'x.db'}", f"{clean / 'notes.txt'} is a file, not a folder"),
                      ("", "the database's path is empty; give a file's path, e.g. plyhall.db")):
        code, errors = run(capsys, "serve", "--port", "0", "--db", db)
        assert code == 1 and len(errors) == 1 and words in errors[0] and "listen" not in errors[0], errors
    assert sorted(path.name for path in clean.iterdir()) == ["games", "notes.txt"]
    assert not list((clean / "games").iterdir()) and (clean / "notes.txt").read_text() == "mine"


def test_export_says_what_is_missing(capsys, clean: Path) -> None:
    code, errors = run(capsys, "export", "--db", "none.db")
    assert code == 1 and "no database file" in errors[-1], errors
    sqlite3.connect(clean / "blank.db").close()  # a file of no bytes: SQLite would make a new database in it
    code, errors = run(capsys, "export", "--db", "blank.db")
    assert code == 1 and errors == ["plyhall export: blank.db is empty, not a database (plyhall serve --db blank.db "
                                    "makes one there; the default is plyhall.db)"], errors
    assert (clean / "blank.db").stat().st_size == 0  # it was written a whole schema (122,880 bytes) by exporting
    (clean / "games").mkdir()
    for db, words in (("games", "the database games is a folder; give a file's path, e.g. games/plyhall.db"),
                      ("", "the database's path is empty; give a file's path, e.g. plyhall.db")):
        for command in (["export"], ["ratings", "--game", "connect4"]):
            code, errors = run(capsys, *command, "--db", db)
            assert code == 1 and errors == [f"plyhall {command[0]}: {words}"], errors
    from server.storage import open_storage

    open_storage(str(clean / "empty.db")).close()  # a database with no games
    code, errors = run(capsys, "export", "--db", "empty.db", "--id", "abc")
    assert code == 1 and "no game with id abc" in errors[-1], errors
    code, errors = run(capsys, "export", "--db", "empty.db", "--game", "chess")
    assert code == 2 and "connect4" in errors[-1], errors  # --game is a game type, as everywhere else


def test_export_finds_a_tournament_by_its_name_and_says_which_there_are(capsys, clean: Path) -> None:
    from server.storage import open_storage
    from server.storage.records import GameEnded, TournamentSaved
    from tests.helpers import game_record

    storage = open_storage(str(clean / "cup.db"))
    storage.apply([TournamentSaved({"id": "spring-cup", "name": "Spring Cup", "status": "finished",
                                    "created_at": 50.0}),
                   GameEnded(game_record("g1", tournament="spring-cup")), GameEnded(game_record("g2"))])
    storage.close()
    for key in ("spring-cup", "Spring Cup", "SPRING  cup"):
        code, errors = run(capsys, "export", "--db", "cup.db", "--tournament", key, "-o", "cup.jsonl")
        lines = (clean / "cup.jsonl").read_text().splitlines()
        assert code == 0 and errors == ["exported 1 game"] and '"id": "g1"' in lines[0] and len(lines) == 1, errors
    code, errors = run(capsys, "export", "--db", "cup.db", "--tournament", "autumn")
    assert code == 1 and errors == ["plyhall export: no tournament 'autumn' in cup.db; its tournaments: "
                                    "spring-cup (Spring Cup)"], errors  # it said 'exported 0 games', exit 0


@pytest.mark.parametrize("output", ["no/such/folder/out.jsonl", "."])
def test_export_to_a_file_it_cannot_write_says_so_in_one_line(capsys, clean: Path, output: str) -> None:
    from server.storage import open_storage

    open_storage(str(clean / "empty.db")).close()
    code, errors = run(capsys, "export", "--db", "empty.db", "-o", output)  # it ended in a traceback
    assert code == 1 and len(errors) == 1 and errors[0].startswith(f"plyhall export: cannot write {output}: "), errors


@pytest.mark.parametrize(("argv", "words"), [
    (["serve", "--port", "abc"], "plyhall serve: error: argument --port: invalid int value: 'abc'"),
    (["tournament", "create", "--format", "knockout"], "plyhall tournament create: error: argument --format: invalid "
                                                        "choice: 'knockout' (choose from 'round-robin', "),
    (["match", "--game", "connect4", "--sprt", "foo"], "plyhall match: error: argument --sprt: 'foo' is not a test: "
                                                       "use elo0=E,elo1=E"),
    (["bot", "--game", "connect4", "--name", "x", "--per-move", "0"],
     "plyhall bot: error: argument --per-move: must be a number of seconds from 0.05 to 86400, not 0"),  # the server
    # said it, as 'time_control.per_move must be ...', once the bot had logged in
    (["match", "--game", "connect4", "--sprt", "elo0=0"], "plyhall match: error: argument --sprt: a test needs elo0 "
                                                          "and elo1: "),
])
def test_a_flag_argparse_refuses_is_one_line_that_says_where_the_options_are(capsys, argv: list[str],
                                                                            words: str) -> None:
    """Not the whole usage block first (25 lines for serve) and the mistake last; nor '--sprt' said twice."""
    code, errors = run(capsys, *argv)
    assert code == 2 and len(errors) == 1 and errors[0].startswith(words), errors
    assert errors[0].endswith(f"(every option: plyhall {argv[0]}{' create' if argv[0] == 'tournament' else ''} "
                              "--help)") and errors[0].count("--sprt") <= 1, errors


@pytest.mark.parametrize(("flags", "words"), [
    (["--format", "swiss"], "a swiss tournament needs its number of rounds: --rounds N"),
    (["--format", "round-robin", "--time-control", "5x"], "time control '5x': use 30 (seconds per move)"),
    (["--format", "round-robin", "--file", "nowhere.toml"], "cannot read nowhere.toml"),
])
def test_tournament_create_says_what_is_wrong_with_the_event_before_asking_for_the_secret(
        capsys, monkeypatch: pytest.MonkeyPatch, flags: list[str], words: str) -> None:
    monkeypatch.delenv("PLYHALL_ORGANISER_SECRET", raising=False)
    code, errors = run(capsys, "tournament", "create", "--game", "connect4", "--players", "a,b",
                       "--url", "ws://127.0.0.1:1/ws", *flags)
    assert code == 2 and len(errors) == 1 and words in errors[0] and "secret" not in errors[0], errors


def test_a_file_that_is_not_utf8_is_one_line_saying_so(capsys, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """An openings file Windows Notepad saved (UTF-16), a definition in Latin-1, an agent file with a UTF-16 mark:
    each a line that names the file and the byte, not a UnicodeDecodeError's traceback (nor "plyhall bot: utf-8")."""
    monkeypatch.delenv("PLYHALL_ORGANISER_SECRET", raising=False)
    openings = tmp_path / "openings.txt"
    openings.write_text("4 4 3 5\n", encoding="utf-16")
    definition = tmp_path / "cup.toml"
    definition.write_bytes(b'game = "connect4"\nformat = "round-robin"\nplayers = "a,b"\nname = "Caf\xe9"\n')
    agent = tmp_path / "agent.py"
    agent.write_bytes(b"\xff\xfedef agent(obs, config):\n    return 3\n")
    url = ["--url", "ws://127.0.0.1:1/ws"]
    code, errors = run(capsys, "tournament", "create", "--game", "connect4", "--format", "round-robin", "--players",
                       "a,b", "--openings", str(openings), *url)
    assert code == 2 and errors == [f"plyhall tournament: the openings file {openings} is not UTF-8 text (byte 0xff "
                                    "at position 0: it is UTF-16); save it as UTF-8"], errors
    code, errors = run(capsys, "tournament", "create", "--file", str(definition), *url)
    assert code == 2 and errors == [f"plyhall tournament: {definition} is not UTF-8 text (byte 0xe9 at position "
                                    "68); save it as UTF-8"], errors
    code, errors = run(capsys, "bot", "--game", "connect4", "--kaggle", str(agent), "--name", "k", *url)
    assert code == 2 and errors == [f"plyhall bot: the agent file {agent} is not UTF-8 text (byte 0xff at position "
                                    "0: it is UTF-16); save it as UTF-8"], errors


def test_a_value_that_is_the_wrong_kind_of_thing_is_said_to_be_that(capsys, monkeypatch: pytest.MonkeyPatch,
                                                                     clean: Path) -> None:
    """What each said before: 'time_margin must be a whole number ..., not '-1''; 'the engine program ... does not
    exist' of a folder; ' has no rated games in plyhall.db' for an empty name."""
    monkeypatch.delenv("PLYHALL_ORGANISER_SECRET", raising=False)
    (clean / "engines").mkdir()
    from server.storage import open_storage

    open_storage(str(clean / "plyhall.db")).close()
    url = ["--url", "ws://127.0.0.1:1/ws"]
    for argv, line in (
            (["tournament", "create", "--game", "connect4", "--format", "round-robin", "--players", "a,b",
              "--time-margin", "-1", *url],
             "plyhall tournament: time_margin is whole milliseconds from 0 to 60000 (e.g. --time-margin 3000), not "
             "'-1'"),
            (["bot", "--game", "connect4", "--engine", f"{clean / 'engines'}", "--name", "e", *url],
             f"plyhall bot: the engine program '{clean / 'engines'}' is a folder: give the program's own path"),
            (["ratings", "--player", ""],
             "plyhall ratings: --player '' is not a player's name: 1 to 32 letters (a-z, A-Z: no accents), digits "
             "and _ . - (starting with a letter or digit)")):
        code, errors = run(capsys, *argv)
        assert code == 2 and errors == [line], (argv, errors)


TOURNAMENT_VALUE_MISTAKES = [
    (["--grace", "nan"], "grace must be a number of seconds (e.g. grace = 60), not 'nan'"),
    (["--grace", "inf"], "grace must be a number of seconds (e.g. grace = 60), not 'inf'"),
    (["--grace", "1e400"], "grace must be a number of seconds (e.g. grace = 60), not '1e400'"),
    (["--format", "gauntlet", "--sprt", "elo0=nan,elo1=20"], "--sprt: elo0 must be a finite number, not 'nan'"),
    (["--format", "gauntlet", "--sprt", "elo0=0,elo1=inf"], "--sprt: elo1 must be a finite number, not 'inf'"),
    (["--format", "gauntlet", "--sprt", "elo0=0,elo1=20,alpha=nan"], "--sprt: alpha must be a finite number, not "
                                                                      "'nan'"),
    (["--time-margin", "1.5"], "time_margin must be a whole number (e.g. time_margin = 3000), not '1.5'"),
    (["--plies", "3"], "--plies says how many plies of each opening to play: it needs --openings FILE"),
]
"""``plyhall tournament create`` values that were sent to the server (a NaN: a 60 s wait, then a traceback), taken
silently (--plies alone) or explained with an example meaning 3 ms."""


@pytest.mark.parametrize(("args", "words"), TOURNAMENT_VALUE_MISTAKES)
def test_tournament_values_are_checked_before_anything_is_sent(capsys, monkeypatch: pytest.MonkeyPatch,
                                                               args: list[str], words: str) -> None:
    monkeypatch.delenv("PLYHALL_ORGANISER_SECRET", raising=False)
    base = {"--game": "connect4", "--format": "round-robin", "--players": "a,b,c", "--url": "ws://127.0.0.1:1/ws"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    code, errors = run(capsys, "tournament", "create", *(part for pair in base.items() for part in pair))
    assert code == 2 and len(errors) == 1 and words in errors[0], errors


def test_tournament_results_takes_one_form(capsys) -> None:
    """``results --json --csv`` printed only the CSV."""
    code, errors = run(capsys, "tournament", "results", "cup", "--json", "--csv")
    assert code == 2 and "argument --csv: not allowed with argument --json" in errors[0], errors


def test_a_tournament_files_sprt_table_is_checked_too(capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PLYHALL_ORGANISER_SECRET", raising=False)
    definition = tmp_path / "g.toml"
    definition.write_text('game = "connect4"\nformat = "gauntlet"\nplayers = "a,b"\nsprt = { elo0 = 0, elo1 = inf }\n')
    code, errors = run(capsys, "tournament", "create", "--file", str(definition), "--url", "ws://127.0.0.1:1/ws")
    assert code == 2 and errors == ["plyhall tournament: --sprt: elo1 must be a finite number, not 'inf'"], errors


def test_the_data_commands_leave_alone_what_they_should_only_read(capsys, clean: Path) -> None:
    """Each of these changed or made a file it should only have read: export -o naming the database emptied it (under
    a running server too); export --id of no game emptied an existing output file; a sqlite:/// source that did not
    exist was made, and 'copied 0 rows; the counts agree'; a foreign SQLite file got Plyhall's tables; a copy ran
    beside the server writing its source; names add took HOUSE-x, a name the server then refuses."""
    from server.storage import SQLiteStorage, open_storage
    from server.storage.records import GameEnded
    from tests.helpers import game_record

    storage = open_storage(str(clean / "games.db"))
    storage.apply([GameEnded(game_record("g1"))])
    storage.close()
    size = (clean / "games.db").stat().st_size
    for output in ("games.db", "./games.db-wal"):
        code, errors = run(capsys, "export", "--db", "games.db", "-o", output)
        assert code == 2 and errors == [f"plyhall export: --output {output} is the database itself; give another "
                                        "file"], errors
    assert (clean / "games.db").stat().st_size == size and not (clean / "games.db-wal").exists()
    (clean / "kept.jsonl").write_text("one line\n")
    code, errors = run(capsys, "export", "--db", "games.db", "--id", "nosuch", "-o", "kept.jsonl")
    assert code == 1 and errors == ["plyhall export: no game with id nosuch in games.db"], errors
    assert (clean / "kept.jsonl").read_text() == "one line\n"
    for argv in (["export", "--db", "sqlite:///typo.db"],
                 ["db", "copy", "--from", "sqlite:///typo.db", "--to", "new.db"]):
        code, errors = run(capsys, *argv)
        assert code == 1 and errors[-1].endswith("no database file typo.db"), (argv, errors)
    assert not (clean / "typo.db").exists() and not (clean / "new.db").exists()
    absolute = f"sqlite:///{str(clean / 'games.db').lstrip('/')}"  # written as if the third / began the path
    for argv in (["export", "--db", absolute], ["serve", "--db", absolute]):
        code, errors = run(capsys, *argv)
        assert code != 0 and f"as SQLAlchemy reads it; for {clean / 'games.db'} write sqlite:///{clean / 'games.db'}" \
            in errors[-1], (argv, errors)
    with contextlib.closing(sqlite3.connect(clean / "notes.db")) as conn, conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    code, errors = run(capsys, "export", "--db", "notes.db")
    assert code == 1 and errors == ["plyhall export: notes.db is not a Plyhall database (its tables: notes)"], errors
    with contextlib.closing(sqlite3.connect(clean / "notes.db")) as conn:
        assert [row[0] for row in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]
    from server.storage.schema import MIGRATIONS

    with contextlib.closing(sqlite3.connect(clean / "first.db")) as conn, conn:  # made before versions were kept
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
    code, errors = run(capsys, "export", "--db", "first.db")  # a Plyhall database all the same: not upgraded behind
    assert code == 1 and "first.db is at schema version 0, older than" in errors[-1], errors  # its server's back
    assert run(capsys, "db", "upgrade", "--db", "first.db")[0] == 0
    assert run(capsys, "export", "--db", "first.db") == (0, ["exported 0 games"])
    server = SQLiteStorage(str(clean / "games.db"))
    server.own()  # as plyhall serve holds its file
    try:
        code, errors = run(capsys, "db", "copy", "--from", "games.db", "--to", "copy.db")
    finally:
        server.close()
    assert code == 1 and "games.db is in use by another Plyhall server" in errors[-1], errors
    assert run(capsys, "db", "copy", "--from", "games.db", "--to", "copy.db")[0] == 0
    same = "sqlite:///" + str(clean / "games.db")  # one file written two ways: it said "in use by" this very command
    code, errors = run(capsys, "db", "copy", "--from", "games.db", "--to", same)
    assert code == 1 and "--from and --to are the same database" in errors[-1], errors
    code, errors = run(capsys, "names", "add", "--db", "games.db", "HOUSE-x")
    assert code != 0 and "HOUSE-x starts with house-" in errors[-1], errors


def test_tournament_list_of_a_server_without_one_says_so(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import client.tournament

    monkeypatch.setattr(client.tournament, "fetch", lambda url, path: '{"tournaments": []}')
    code, errors = run(capsys, "tournament", "list", "--url", "ws://127.0.0.1:1/ws")
    assert code == 0 and errors == ["no tournaments on ws://127.0.0.1:1/ws yet (plyhall tournament create makes "
                                    "one)"], errors  # it printed nothing at all


def test_ratings_of_a_game_nobody_is_rated_in_is_one_line_saying_how_ratings_come(capsys, clean: Path) -> None:
    from server.storage import open_storage

    open_storage(str(clean / "new.db")).close()
    assert main(["ratings", "--db", "new.db", "--game", "connect4"]) == 0
    assert capsys.readouterr().out.splitlines() == [  # it printed the table's header and legend with no rows
        "connect4: no rated players yet (rated games are played on the ladder, plyhall bot --ladder, or in rated "
        "rooms, by claimed names)"]


def test_a_bot_that_stops_on_an_error_after_playing_prints_its_score_first(capsys, monkeypatch) -> None:
    """Taken over, given up on the connection, refused: the games played so far are said before the reason (the
    bot printed no score at all)."""
    import client.runner.bot
    from client.sdk import GameResult, ServerError, TakenOver

    for error, reason in ((TakenOver("deep logged in from another connection; this one stops"),
                           "plyhall bot: deep logged in from another connection; this one stops"),
                          (ConnectionError("no server at ws://127.0.0.1:1/ws; gave up after 8 reconnection attempts"),
                           "plyhall bot: no server at ws://127.0.0.1:1/ws; gave up after 8 reconnection attempts"),
                          (ServerError({"type": "error", "code": "bad_secret", "message": "wrong secret"}),
                           "plyhall bot: the server refused: wrong secret")):
        async def two_games_then(player, options, error=error):  # noqa: ANN001, ANN202 - run_player's place
            options.on_result(GameResult("Lake", 0, 0, "four in a row", ["deep", "rookie"], "g1", game_no=1))
            options.on_result(GameResult("Lake", 0, None, "the board is full", ["deep", "rookie"], "g2", game_no=2))
            raise error

        monkeypatch.setattr(client.runner.bot, "run_player", two_games_then)
        code = main(["bot", "--game", "connect4", "--name", "deep", "--level", "random"])
        out, err = capsys.readouterr()
        assert code == 1 and out.splitlines()[-1] == "stopped: 1.5/2 points" and err.strip() == reason, (out, err)


def test_bot_names_the_levels_when_given_one_that_is_not(capsys) -> None:
    code, errors = run(capsys, "bot", "--game", "connect4", "--level", "grandmaster", "--name", "x")
    assert code == 2 and any("levels:" in line for line in errors), errors


ENTRANT_MISTAKES = [
    (["--tournament", "class", "--name", "a b", "--", "java"], "--name 'a b' is not an entrant's name"),
    (["--tournament", "class", "--name", "house-x", "--", "java"], "house- are the server's bots"),
    (["--tournament", "class", "--name", "ann"], "give the bot's command after --"),
    (["--tournament", "class", "--name", "ann", "--", "/nothing/here"], "is not a program on PATH"),
    (["--tournament", "class", "--name", "ann", "--url", "http://127.0.0.1:1/", "--", "java"],
     "bots connect to the WebSocket address"),
    (["--tournament", "class", "--name", "ann", "--poll", "0", "--", "java"], "give 0.1 to 60 seconds"),
]
"""``plyhall cosc322 entrant`` arguments and the words of the one line that answers them."""


@pytest.mark.parametrize(("args", "words"), ENTRANT_MISTAKES)
def test_the_entrant_runner_says_what_is_wrong_with_its_arguments(capsys, args: list[str], words: str) -> None:
    code, errors = run(capsys, "cosc322", "entrant", *args)
    assert code == 2 and len(errors) == 1 and words in errors[0], errors


def test_names_registers_lists_and_refuses_in_one_line_each(capsys, clean: Path) -> None:
    """``plyhall names``: a token for each name added, a name claimed already or not a name refused."""
    assert main(["names", "add", "alice", "bob", "--db", "p.db"]) == 0
    said = capsys.readouterr()
    tokens = dict(line.split() for line in said.out.splitlines())
    assert set(tokens) == {"alice", "bob"} and len(set(tokens.values())) == 2
    assert "p.db did not exist: made a new database there" in said.err  # a mistyped --db is seen at once
    assert main(["names", "add", "carol", "--db", "p.db"]) == 0 and "did not exist" not in capsys.readouterr().err
    sqlite3.connect(clean / "other.db").execute("CREATE TABLE invoices (n)").connection.commit()
    code, errors = run(capsys, "names", "add", "dave", "--db", "other.db")
    assert code == 1 and "not a Plyhall database (its tables: invoices)" in errors[0], errors
    code, errors = run(capsys, "names", "add", "alice", "--db", "p.db")
    assert code == 1 and "alice is claimed already" in " ".join(errors), errors
    code, errors = run(capsys, "names", "add", "house-x", "no spaces", "--db", "p.db")
    assert code == 2 and "house-" in " ".join(errors) and "'no spaces' is not a name" in " ".join(errors), errors
    assert main(["names", "list", "--db", "p.db"]) == 0 and capsys.readouterr().out.split() == ["alice", "bob", "carol"]


def test_db_copy_moves_a_database_into_an_empty_one_only(capsys, clean: Path) -> None:
    """``plyhall db copy`` between two SQLite files (tests/test_storage.py copies to PostgreSQL and back)."""
    from server.storage import open_storage
    from server.storage.records import ClaimSaved, GameEnded, MovePlayed
    from tests.helpers import game_record

    source = open_storage(str(clean / "source.db"))
    source.apply([ClaimSaved("ann", "s", "d"), *(GameEnded(game_record(f"g{i}")) for i in range(3)),
                  *(MovePlayed(f"g{i}", move) for i in range(3) for move in game_record("x").moves)])
    counts = source.counts()
    source.close()
    assert main(["db", "copy", "--from", "sqlite:///source.db", "--to", "sqlite:///target.db"]) == 0
    assert "the counts agree" in capsys.readouterr().out
    code, errors = run(capsys, "db", "copy", "--from", "sqlite:///source.db", "--to", "sqlite:///target.db")
    assert code == 1 and "not empty" in " ".join(errors), errors
    copied = open_storage(str(clean / "target.db"))
    try:
        assert copied.counts() == counts and copied.get_claim("ann") == ("s", "d")
        assert [m["move"] for m in copied.get_game("g2")["moves"]] == ["1", "2", "3"]
    finally:
        copied.close()


@pytest.mark.parametrize(("group", "word"), [("cosc322", "ACTION"), ("tournament", "ACTION"), ("names", "ACTION"),
                                             ("db", "TOOL")])
def test_a_command_group_without_its_action_says_so_in_one_line(capsys, group: str, word: str) -> None:
    """``plyhall cosc322`` alone printed its whole help and exited 2 without saying what was wrong."""
    code, errors = run(capsys, group)
    assert code == 2 and errors == [f"plyhall {group}: error: the following arguments are required: {word} (every "
                                    f"option: plyhall {group} --help)"], errors
    assert capsys.readouterr().out == ""


def _subcommands() -> list[list[str]]:
    """Every command and subcommand of ``plyhall``, as the words that name it (``["names", "list"]``)."""
    import argparse

    from plyhall.cli import build_parser

    found = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append([*words, name])
                    walk(sub, [*words, name])

    walk(build_parser(), [])
    return found


@pytest.mark.parametrize("words", _subcommands(), ids=" ".join)
def test_every_commands_help_says_what_it_does_under_its_usage(capsys, words: list[str]) -> None:
    """``plyhall names list --help`` went from its usage line straight to its options."""
    with pytest.raises(SystemExit):
        main([*words, "--help"])
    paragraphs = capsys.readouterr().out.split("\n\n")
    assert paragraphs[0].startswith(f"usage: plyhall {' '.join(words)}"), paragraphs[0]
    assert not paragraphs[1].startswith(("options:", "positional arguments:")), paragraphs[:2]


def test_serve_leaves_another_programs_database_alone(capsys, clean: Path) -> None:
    """``plyhall serve --db`` of another program's SQLite file added Plyhall's eleven tables to it and turned it to
    write-ahead logging (a file with its own ``games`` table was rewritten, then refused for a missing column)."""
    for name, schema in (("invoices.db", "CREATE TABLE invoices (n)"), ("scores.db", "CREATE TABLE games (id)")):
        with contextlib.closing(sqlite3.connect(clean / name)) as conn, conn:
            conn.execute(schema)
        before = (clean / name).read_bytes()
        code, errors = run(capsys, "serve", "--db", name, "--port", "1")
        table = schema.split()[2]
        assert code == 1 and errors == [f"plyhall serve: {name} is not a Plyhall database (its tables: {table})"]
        assert (clean / name).read_bytes() == before and not (clean / f"{name}-wal").exists()


def test_a_database_on_read_only_storage_is_said_to_be_that_not_damaged(capsys, clean: Path, monkeypatch) -> None:
    """``plyhall export`` of a database on a read-only mount said it "is not a usable Plyhall database: unable to
    open database file", as of a damaged file. (Root writes through permissions, so the folder's are stood in for.)"""
    import os
    import sqlite3

    from server.storage import open_storage
    from server.storage.sql import SQLStorage

    open_storage(str(clean / "backup.db")).close()
    folder = str(clean)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == folder else real_access(p, mode))

    def refused(self: object, node: str = "main") -> None:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(SQLStorage, "__init__", refused)
    code, errors = run(capsys, "export", "--db", "backup.db")
    assert code == 1 and errors == [f"plyhall export: backup.db cannot be opened: its folder {folder} is read-only, "
                                    "and SQLite writes beside a database even to read it (unable to open database "
                                    "file); copy it somewhere writable"], errors


def test_a_command_line_shown_in_a_message_hides_its_secrets() -> None:
    """A second server on one database printed the first one's whole command line, its --organiser-secret too."""
    from server.storage.sqlite import command_shown

    argv = ["python", "-m", "plyhall", "serve", "--organiser-secret", "cup-secret", "--secret=abc", "--cluster",
            "redis://user:pw@10.0.0.5:6379/0", "--db", "postgresql://plyhall:PW@db/plyhall", "--port", "8765"]
    assert command_shown(argv) == ("python -m plyhall serve --organiser-secret *** --secret=*** --cluster "
                                   "redis://user:***@10.0.0.5:6379/0 --db postgresql://plyhall:***@db/plyhall "
                                   "--port 8765")


@pytest.mark.parametrize(("argv", "said"), [
    (["serve", "--prot", "18932"], "plyhall serve: error: unrecognized arguments: --prot 18932 (every option: "
                                   "plyhall serve --help)"),
    (["tournament", "run", "--secrt", "x"], "plyhall tournament run: error: unrecognized arguments: --secrt x "
                                            "(every option: plyhall tournament run --help)"),
    (["--bogus"], "plyhall: error: unrecognized arguments: --bogus (every option: plyhall --help)"),
])
def test_an_unknown_option_is_said_of_the_command_it_was_given_to(capsys, argv: list[str], said: str) -> None:
    """``plyhall serve --prot 1`` said "plyhall: error: ... (every option: plyhall --help)", whose help lists no
    option of serve."""
    code, errors = run(capsys, *argv)
    assert code == 2 and errors == [said], errors
