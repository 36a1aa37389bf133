// @ts-check
/**
 * The lobby (#/lobby): the player's own games (live first, then the latest results), finding an opponent
 * (seek) and who else seeks, playing a house bot, creating a room with every option the server offers, and the
 * rooms: live games first, then rooms waiting for a player, then the latest finished games with their results.
 */

import { field, h, replace } from "./dom.js";
import { describeTimeControl, resultText } from "./format.js";
import { GAMES } from "./games/index.js";

/**
 * Time controls offered in short forms; the first one leaves the choice to the server.
 * @type {[string, Record<string, any> | null][]}
 */
const PRESETS = [
  ["server's default", null],
  ["10 s a move", { per_move: 10 }],
  ["30 s a move", { per_move: 30 }],
  ["2 min a move", { per_move: 120 }],
  ["5 min + 3 s", { initial: 300, increment: 3 }],
  ["15 min + 10 s", { initial: 900, increment: 10 }],
  ["untimed", { untimed: true }],
];

/** Finished rooms the lobby lists, and finished games of your own it keeps under "Your games" (the newest). */
const FINISHED_SHOWN = 8;
const YOURS_FINISHED_SHOWN = 5;

function gameTitle(id) {
  return GAMES[id] ? GAMES[id].title : id;
}

/**
 * What the two seats of `game` are called: its colours ("Red", "Yellow"), or, for a game whose pieces belong to
 * nobody (Quarto), the order of the seats.
 * @param {string} game
 * @returns {string[]}
 */
function seatNames(game) {
  const seats = GAMES[game] ? GAMES[game].seats : ["", ""];
  return seats[0] ? seats : ["First seat", "Second seat"];
}

/**
 * What a house bot level plays like (the levels of bots/__init__.py's LEVELS): a few words for the level list,
 * and a sentence for beside it. A level this page does not know has neither.
 * @param {string} level
 * @returns {{ short: string, long: string } | null}
 */
export function levelMeaning(level) {
  if (level === "random") return { short: "the weakest", long: "random plays any legal move, at random." };
  if (level === "novice") {
    return { short: "sees one move ahead", long: "novice takes a win in one move when it has one, avoids moves that give you one, and otherwise plays at random." };
  }
  if (level === "master") {
    return { short: "the strongest", long: "master is the strongest level: the server's fast engine, a deep search that plays endgames exactly." };
  }
  const depth = /^minimax-(\d+)$/.exec(level);
  if (!depth) return null;
  const n = Number(depth[1]);
  const looks = n === 1 ? "looks at its own next move only" : n === 2 ? "looks 2 moves ahead, its own and your reply"
    : `looks ${n} moves ahead, its own and yours in turn`;
  return { short: `looks ${n} move${n === 1 ? "" : "s"} ahead`, long: `${level} ${looks}, and picks the best by a simple score of the position; a deeper level plays better and thinks longer.` };
}

/** A level as a list shows it: "minimax-3: looks 3 moves ahead". */
function levelText(level) {
  const meaning = levelMeaning(level);
  return meaning ? `${level}: ${meaning.short}` : level;
}

/** A link to the rules page of `game` (rules.js): "How to play Quarto". */
function rulesLink(game) {
  return h("a", { class: "rules-link", href: `#/rules/${encodeURIComponent(game)}`, text: `How to play ${gameTitle(game)}` });
}

/** Keep `link` pointing at the rules of the game `control` selects. */
function followGame(link, control) {
  const update = () => {
    link.setAttribute("href", `#/rules/${encodeURIComponent(control.value)}`);
    link.textContent = `How to play ${gameTitle(control.value)}`;
  };
  control.addEventListener("change", update);
  update();
}

/**
 * The players of a room as people say them: the names of its current or last game ("ann vs house-novice-3") even
 * when they have left the seats, "ann vs open seat" only while a seat waits for a player.
 */
function playersText(room) {
  const names = room.status !== "waiting" && room.players && room.players.length ? room.players : room.seats;
  return names.map((seat) => seat || "open seat").join(" vs ");
}

/** A room's last result in words, or "". */
function roomResult(room) {
  if (!room.result) return "";
  const players = room.players || room.seats;
  const winner = room.result.winner === null ? null : players.indexOf(room.result.winner); // the listing names the winner
  return resultText({ ...room.result, winner }, players);
}
function select(name, label, options, value) {
  const control = h("select", { name },
    options.map(([optionValue, text]) => h("option", { value: optionValue, text, selected: String(optionValue) === String(value) })));
  return { control, field: field(label, control) };
}

function input(name, label, props = {}) {
  const control = h("input", { name, ...props });
  return { control, field: field(label, control) };
}

/** A time-control select; `timedOnly` leaves "untimed" out (a game against a house bot must be timed). */
function presetField(name, label, { timedOnly = false } = {}) {
  /** @type {[number, string][]} */
  const presets = [];
  PRESETS.forEach(([text, control], i) => {
    if (!(timedOnly && control && control.untimed)) presets.push([i, text]);
  });
  return select(name, label, presets, 0);
}

export function mountLobby(main, app) {
  const { session, store } = app;
  const stops = [];
  const games = Object.keys(GAMES).filter((id) => session.me.games.includes(id));
  const house = Array.isArray(session.me.house) ? session.me.house : [];
  const yours = h("div", { class: "yours" });
  // (not a live region: a screen reader read the whole list again at every spectator count; the count is one)
  const roomList = h("ul", { class: "room-list" });
  const roomCount = h("span", { class: "count", "aria-live": "polite" });
  const lobbyNotice = h("p", { class: "notice error", role: "alert" });

  // Play someone: a seek pairs two players who ask for the same game and settings.
  const seekGame = select("game", "Game", games.map((id) => [id, gameTitle(id)]), games[0]);
  const seekTime = presetField("time", "Time");
  const seekStatus = h("p", { class: "form-status", role: "status" });
  const seekButton = h("button", { type: "submit", class: "primary", text: "Find an opponent" });
  const seekRules = rulesLink(games[0]);
  followGame(seekRules, seekGame.control);
  let seeking = null;
  const seekForm = h("form", { class: "card", onsubmit: toggleSeek, "aria-labelledby": "seek-title" },
    h("h2", { id: "seek-title", text: "Play someone" }),
    h("p", { class: "hint", text: "You are paired with the next player (or bot) who asks for the same game and time." }),
    seekGame.field, seekRules, seekTime.field, h("div", { class: "buttons" }, seekButton, seekStatus));
  const seekList = h("ul", { class: "seek-list" });
  const seekSection = h("section", { class: "seeks", "aria-labelledby": "seeks-title" },
    h("h2", { id: "seeks-title", text: "Seeking an opponent" }), seekList);

  // Play a house bot.
  const botGame = select("game", "Game", games.map((id) => [id, gameTitle(id)]), games[0]);
  const botLevel = select("level", "Level", house.map((level) => [level, levelText(level)]), house.includes("novice") ? "novice" : house[0]);
  const levelHelp = h("p", { class: "hint", id: "level-help" });
  botLevel.control.setAttribute("aria-describedby", "level-help");
  const describeLevel = () => {
    const meaning = levelMeaning(botLevel.control.value);
    levelHelp.textContent = `${meaning ? `${meaning.long} ` : ""}The list goes from the weakest level to the strongest.`;
  };
  botLevel.control.addEventListener("change", describeLevel);
  describeLevel();
  const botFirst = select("first", "Who moves first", [[0, "you"], [1, "the bot"]], 0);
  const botTime = presetField("time", "Time", { timedOnly: true });
  const botStatus = h("p", { class: "form-status", role: "status" });
  const botRules = rulesLink(games[0]);
  followGame(botRules, botGame.control);
  const botForm = h("form", { class: "card", onsubmit: playBot, "aria-labelledby": "bot-title" },
    h("h2", { id: "bot-title", text: "Play a bot" }),
    house.length
      ? [botGame.field, botRules, botLevel.field,
        levelHelp,
        botFirst.field, botTime.field,
        h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", text: "Play the bot" }), botStatus)]
      : h("p", { class: "hint", text: "This server runs no house bots (an operator starts them with plyhall serve --house-bots N)." }));

  // Create a room with every option.
  const create = {
    name: input("name", "Room name (optional)", { maxlength: "40", placeholder: "picked for you", autocomplete: "off" }),
    game: select("game", "Game", games.map((id) => [id, gameTitle(id)]), games[0]),
    first: select("first", "Moves first", [[0, "you"], [1, "your opponent"]], 0),
    kind: select("kind", "Time control", [["default", "server's default"], ["per_move", "seconds a move"], ["game", "game clock + increment"], ["untimed", "untimed"]], "default"),
    perMove: input("per_move", "Seconds a move", { type: "number", min: "0.05", max: "86400", step: "any", value: "30" }),
    initial: input("initial", "Game clock, minutes", { type: "number", min: "0.01", max: "1440", step: "any", value: "5" }),
    increment: input("increment", "Increment, seconds", { type: "number", min: "0", max: "3600", step: "any", value: "3" }),
    illegal: select("illegal", "An illegal move", [["default", "server's default"], ["reject", "is refused; try again"], ["lose", "loses the game"]], "default"),
    grace: input("grace", "Seconds to come back after a drop", { type: "number", min: "0", max: "600", step: "any", placeholder: "server's default" }),
    games: input("games", "Games in the series", { type: "number", min: "1", max: "1000", step: "1", value: "1" }),
    opponent: select("opponent", "Opponent", [["", "a person"], ...house.map((level) => [level, `house bot ${levelText(level)}`])], ""),
    seat: select("seat", "Your seat", [[0, "Red"], [1, "Yellow"], ["none", "none: I only watch"]], 0),
  };
  const createStatus = h("p", { class: "form-status", role: "status" });
  const createForm = h("form", { class: "create", onsubmit: createRoom },
    Object.values(create).map((part) => part.field),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", text: "Create the room" }), createStatus));
  const createCard = h("details", { class: "card create-card" }, h("summary", {}, h("h2", { text: "Create a room" })), createForm);

  /** The seats by the game's colours, and who moves first as "you" / "your opponent" (by colour for a watcher). */
  function refreshCreateForm() {
    const names = seatNames(create.game.control.value);
    create.seat.control.options[0].textContent = names[0];
    create.seat.control.options[1].textContent = names[1];
    const seat = create.seat.control.value;
    for (const index of [0, 1]) {
      create.first.control.options[index].textContent = seat === "none" ? names[index]
        : String(index) === seat ? "you" : "your opponent";
    }
    const kind = create.kind.control.value;
    create.perMove.field.hidden = kind !== "per_move";
    create.initial.field.hidden = kind !== "game";
    create.increment.field.hidden = kind !== "game";
    const bot = create.opponent.control.value !== "";
    create.seat.control.disabled = bot;
    if (bot) create.seat.control.value = "0";
  }
  for (const part of [create.game, create.kind, create.opponent, create.seat]) part.control.addEventListener("change", refreshCreateForm);
  refreshCreateForm();

  replace(main, h("section", { class: "lobby" },
    h("h1", { text: "Lobby" }),
    h("div", { class: "lobby-grid" },
      h("div", { class: "cards" }, seekForm, botForm, createCard,
        h("p", { class: "hint rules-all" }, "New to a game? ",
          games.map((id, i) => [i ? " · " : "", h("a", { href: `#/rules/${id}`, text: gameTitle(id) })]))),
      h("div", { class: "lobby-lists" },
        yours,
        seekSection,
        h("section", { class: "rooms-section", "aria-labelledby": "rooms-title" },
          h("h2", { id: "rooms-title" }, "Rooms ", roomCount),
          lobbyNotice,
          roomList)))));

  /** @type {any[]} the latest listing */
  let listed = [];

  /** Your games: those being played first (yours to move at the top), then the latest results. */
  function renderYours() {
    const me = session.me.name;
    const seatedNames = new Set(store.seated().map((model) => model.name));
    // a room you played in counts as yours once finished; before that only while you hold its seat (a series you
    // left goes on listing you among its players)
    const mine = listed.filter((room) => seatedNames.has(room.name) || room.seats.includes(me)
      || (room.status === "finished" && (room.players || []).includes(me)));
    const open = mine.filter((room) => room.status !== "finished");
    const finished = mine.filter((room) => room.status === "finished").reverse().slice(0, YOURS_FINISHED_SHOWN);
    // a room the store knows before the listing says so (just joined)
    for (const model of store.seated()) {
      if (!mine.some((room) => room.name === model.name)) open.push({ name: model.name, game: model.game ? model.game.id : "", status: model.status, seats: model.seats || [] });
    }
    const myTurn = (room) => {
      const model = store.get(room.name);
      return Boolean(model && model.isPlayer && model.myTurn);
    };
    open.sort((a, b) => Number(myTurn(b)) - Number(myTurn(a)) || Number(b.status === "playing") - Number(a.status === "playing"));
    if (!open.length && !finished.length) {
      yours.replaceChildren();
      return;
    }
    const item = (room) => h("li", { class: `your-game ${room.status}`, "data-room": room.name },
      h("a", { href: `#/room/${encodeURIComponent(room.name)}`, text: room.name }),
      ` · ${gameTitle(room.game)} · ${playersText(room)}`,
      myTurn(room) ? h("strong", { class: "your-move", text: " · your move" }) : null,
      room.status === "finished" ? ` · ${roomResult(room) || "finished"}` : null);
    replace(yours, h("h2", { text: "Your games" }),
      open.length ? h("ul", { class: "your-live" }, open.map(item)) : null,
      finished.length ? h("h3", { text: "Latest results" }) : null,
      finished.length ? h("ul", { class: "your-finished" }, finished.map(item)) : null);
  }

  /** Who seeks which game, oldest first; a seek of yours is marked, another can be answered with one click. */
  function renderSeeks(seeks) {
    const me = session.me.name;
    if (!seeks.length) {
      seekList.replaceChildren(h("li", { class: "empty", text: "Nobody is seeking an opponent now." }));
      return;
    }
    seekList.replaceChildren(...seeks.map((seek) => h("li", { class: "seek-row", "data-name": seek.name },
      h("span", { class: "seek-who", text: seek.name === me ? "you" : seek.name }),
      h("span", { class: "seek-what", text: `${gameTitle(seek.game)} · ${describeTimeControl(seek.time_control)}${seek.games > 1 ? ` · ${seek.games} games` : ""}${seek.rated === false ? " · unrated" : ""}` }),
      seek.name === me ? h("span", { class: "hint", text: "waiting…" })
        : h("button", { type: "button", class: "small", text: "Play", "aria-label": `Play ${seek.name} at ${gameTitle(seek.game)}`, onclick: () => answerSeek(seek) }))));
  }

  /** Live games first (the most watched on top), then rooms waiting for a player, then the latest finished. */
  function renderRooms(rooms) {
    listed = rooms;
    const newest = (list) => list.slice().reverse(); // the listing is in the order the rooms were opened
    const live = newest(rooms.filter((room) => room.status === "playing")).sort((a, b) => b.spectators - a.spectators);
    const waiting = newest(rooms.filter((room) => room.status === "waiting"));
    const finished = newest(rooms.filter((room) => room.status === "finished"));
    const shownFinished = finished.slice(0, FINISHED_SHOWN);
    roomCount.textContent = `(${live.length} live, ${waiting.length} waiting, ${finished.length} finished)`;
    const group = (title, list) => (list.length ? [h("li", { class: "room-group", text: title }), ...list.map(roomRow)] : []);
    const rows = [...group("Live now", live), ...group("Waiting for players", waiting),
      ...group(finished.length > shownFinished.length ? `Latest finished (${shownFinished.length} of ${finished.length})` : "Finished", shownFinished)];
    const focused = focusedRow();
    if (rows.length) roomList.replaceChildren(...rows);
    // (a room closes once its players leave: its games are under Replays)
    else roomList.replaceChildren(h("li", { class: "empty" }, "No open rooms: create one, or find an opponent. Finished games are under ",
      h("a", { href: "#/replay", text: "Replays" }), "."));
    if (focused) refocus(focused);
    renderYours();
    if (!performance.getEntriesByName("plyhall-lobby-ready").length) performance.mark("plyhall-lobby-ready"); // benchmarks/web_load.py
  }

  /**
   * The room row control that has the keyboard's focus (its room and its words), to give it back once the list is
   * made again: a row rebuilt when someone came to watch took the focus away, and Enter did nothing.
   * @returns {{room: string, text: string} | null}
   */
  function focusedRow() {
    const active = document.activeElement;
    const row = active && roomList.contains(active) ? active.closest("li[data-room]") : null;
    return row instanceof HTMLElement && active ? { room: row.dataset.room || "", text: active.textContent || "" } : null;
  }

  /** @param {{room: string, text: string}} focused */
  function refocus(focused) {
    const row = [...roomList.querySelectorAll("li[data-room]")].find((li) => li instanceof HTMLElement && li.dataset.room === focused.room);
    const control = row && [...row.querySelectorAll("a, button")].find((el) => el.textContent === focused.text);
    if (control instanceof HTMLElement) control.focus();
  }

  function roomRow(room) {
    const href = `#/room/${encodeURIComponent(room.name)}`;
    const mine = room.seats.includes(session.me.name);
    const free = room.seats.indexOf(null);
    const players = playersText(room);
    const result = roomResult(room);
    const series = room.games > 1 ? ` · game ${Math.max(1, room.game_no)} of ${room.games}` : "";
    const buttons = h("div", { class: "row-actions" });
    if (mine) {
      buttons.append(h("a", { class: "button", href, text: "Open" }));
    } else {
      if (free >= 0 && room.status !== "finished") {
        buttons.append(h("button", { type: "button", class: "primary", text: "Take a seat", onclick: () => takeSeat(room.name) }));
      }
      buttons.append(h("a", { class: "button", href, text: "Watch" }));
    }
    return h("li", { class: `room-row ${room.status}`, "data-room": room.name },
      h("div", { class: "room-name" }, h("a", { href, text: room.name }), h("span", { class: `badge ${room.status}`, text: room.status })),
      h("div", { class: "room-game", text: `${gameTitle(room.game)} · ${describeTimeControl(room.time_control)}${series}` }),
      h("div", { class: "room-players" }, players, result ? h("span", { class: "room-result", text: result }) : null),
      h("div", { class: "room-watch", text: `${room.spectators} watching` }),
      buttons);
  }

  async function takeSeat(room) {
    try {
      await session.request({ type: "join", room, role: "player" });
      app.navigate(`#/room/${encodeURIComponent(room)}`);
    } catch (error) {
      alertIn(lobbyNotice, error.message);
    }
  }

  /** Say `text` in `element` (beside the button that caused it), as an error, and bring it into view. */
  function alertIn(element, text) {
    element.textContent = text;
    element.classList.toggle("error", Boolean(text));
    if (text) element.scrollIntoView({ block: "nearest" });
  }

  /** Answer a seek from the list: seek the same game on the same settings, which pairs the two at once. */
  async function answerSeek(seek) {
    const message = { type: "seek", game: seek.game, time_control: seek.time_control, games: seek.games, rated: seek.rated };
    if (seek.options && Object.keys(seek.options).length) message.options = seek.options;
    try {
      const reply = await session.request(message);
      if (reply.type === "joined") {
        app.navigate(`#/room/${encodeURIComponent(reply.room)}`);
        return;
      }
      seeking = seek.game;
      seekButton.textContent = "Cancel";
      alertIn(seekStatus, "");
      seekStatus.textContent = `${seek.name} was paired with someone else first: you now wait for ${gameTitle(seek.game)} (${describeTimeControl(seek.time_control)})…`;
    } catch (error) {
      alertIn(lobbyNotice, error.message);
    }
  }

  async function toggleSeek(event) {
    event.preventDefault();
    if (seeking) {
      await session.request({ type: "cancel_seek", game: seeking }).catch(() => {});
      stopSeeking("");
      return;
    }
    const game = seekGame.control.value;
    const message = { type: "seek", game };
    const control = PRESETS[seekTime.control.value][1];
    if (control) message.time_control = control;
    try {
      const reply = await session.request(message);
      if (reply.type === "joined") {
        app.navigate(`#/room/${encodeURIComponent(reply.room)}`);
        return;
      }
      seeking = game;
      seekButton.textContent = "Cancel";
      seekStatus.textContent = `Looking for an opponent for ${gameTitle(game)} (${describeTimeControl(reply.seek.time_control)})…`;
    } catch (error) {
      alertIn(seekStatus, error.message);
    }
  }

  function stopSeeking(text) {
    seeking = null;
    seekButton.textContent = "Find an opponent";
    alertIn(seekStatus, text);
  }

  stops.push(session.on("joined", (msg) => {
    if (seeking && msg.role === "player" && msg.settings.game === seeking) {
      seeking = null;
      app.navigate(`#/room/${encodeURIComponent(msg.room)}`);
    }
  }));

  /** Create a room and take a seat in it (or just watch it); `expecting` names a house bot coming. */
  async function openRoom(message, seat, status) {
    try {
      const reply = await session.request(message);
      const room = reply.room.name;
      if (seat === null) {
        app.navigate(`#/room/${encodeURIComponent(room)}`);
        return;
      }
      await session.request({ type: "join", room, seat, role: "player" });
      if (message.opponent) store.get(room).expecting = message.opponent;
      app.navigate(`#/room/${encodeURIComponent(room)}`);
    } catch (error) {
      alertIn(status, error.message); // the server's words say what to do (PROTOCOL.md §7)
    }
  }

  function playBot(event) {
    event.preventDefault();
    const message = { type: "create_room", game: botGame.control.value, options: { first: Number(botFirst.control.value) },
      opponent: botLevel.control.value };
    const control = PRESETS[botTime.control.value][1];
    if (control) message.time_control = control;
    openRoom(message, 0, botStatus);
  }

  function createRoom(event) {
    event.preventDefault();
    const message = { type: "create_room", game: create.game.control.value, options: { first: Number(create.first.control.value) } };
    const name = create.name.control.value.trim();
    if (name) message.name = name;
    const kind = create.kind.control.value;
    if (kind === "per_move") message.time_control = { per_move: Number(create.perMove.control.value) };
    if (kind === "game") message.time_control = { initial: Number(create.initial.control.value) * 60, increment: Number(create.increment.control.value || 0) };
    if (kind === "untimed") message.time_control = { untimed: true };
    if (create.illegal.control.value !== "default") message.illegal_move = create.illegal.control.value;
    if (create.grace.control.value !== "") message.grace = Number(create.grace.control.value);
    const series = Number(create.games.control.value || 1);
    if (series !== 1) message.games = series;
    if (create.opponent.control.value) message.opponent = create.opponent.control.value;
    const seat = create.seat.control.value === "none" ? null : Number(create.seat.control.value);
    openRoom(message, message.opponent ? 0 : seat, createStatus);
  }

  stops.push(session.on("rooms", (msg) => {
    renderRooms(msg.rooms);
    renderSeeks(msg.seeks || []);
  }));
  stops.push(session.on("*", (msg) => {
    if (["joined", "left", "game_start", "moved", "game_over"].includes(msg.type)) renderYours();
  }));
  session.request({ type: "watch_lobby", on: true }).catch((error) => { lobbyNotice.textContent = error.message; });
  renderYours();

  return () => {
    for (const stop of stops) stop();
    if (!session.loggedIn) return;
    session.request({ type: "watch_lobby", on: false }).catch(() => {});
    // a seek answered while the lobby is gone would seat the player in a game they cannot see
    if (seeking) session.request({ type: "cancel_seek", game: seeking }).catch(() => {});
  };
}
