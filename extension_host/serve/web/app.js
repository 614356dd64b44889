// The web page of `extensions serve --listen`: the client protocol (JSON-RPC over the page's
// own WebSocket) from the browser. Sessions (list, create, open, fork, dispose), a session's
// turns as they stream, permission requests, cancel, `/` and `@` completion, the session's
// extensions with reload, and the canvas panes (canvases.js).
//
// Everything an extension, a model or a tool says is put in the page as text (textContent or
// text nodes), never as HTML. The token comes from this module's own URL (the page gave it).

const TOKEN = new URL(import.meta.url).searchParams.get("token") ?? "";
const sibling = (name) => new URL(`${name}?token=${encodeURIComponent(TOKEN)}`, import.meta.url).href;
const { CanvasPanes } = await import(sibling("canvases.js"));

const PROTOCOL_VERSION = "0.1.0";
const CAPABILITIES = { canvases: true }; // this page shows canvases: their extensions may open them
const COMPLETION_DELAY_MS = 120;
const MAX_RETRY_MS = 5000;

const $ = (id) => document.getElementById(id);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// -- the connection ------------------------------------------------------------------------

class Rpc {
  constructor(onNotification, onState) {
    this.onNotification = onNotification;
    this.onState = onState;
    this.pending = new Map();
    this.nextId = 1;
    this.retry = 250;
    this.socket = null;
  }

  connect() {
    const url = `ws://${location.host}/?token=${encodeURIComponent(TOKEN)}`;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retry = 250;
      this.onState("open");
    });
    socket.addEventListener("message", (event) => this.#receive(event.data));
    socket.addEventListener("close", () => {
      for (const { reject } of this.pending.values()) reject(new Error("the connection to the server closed"));
      this.pending.clear();
      this.onState("closed");
      setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, MAX_RETRY_MS);
    });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected to the server"));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  #receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.id !== undefined && message.id !== null && !message.method) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new Error(String(message.error.message ?? "the server refused")));
      else waiting.resolve(message.result);
    } else if (message.method) {
      this.onNotification(message.method, message.params);
    }
  }
}

// -- what the page knows ---------------------------------------------------------------------

const state = {
  clientId: `web-${randomId()}`,
  connected: false,
  initialized: false,
  lastSeq: 0,
  clientSeq: 0,
  sessions: new Map(), // uri -> SessionSummary
  current: null, // the open session's uri
  activeTurn: null, // its running turn's id
  firstTurn: null, // the oldest turn shown (for fetchTurns)
  lastFinished: null, // the newest finished turn (fork point)
  turns: new Map(), // turn id -> {root, parts, foot, status}
  parts: new Map(), // part id -> {node, text, pending}
  calls: new Map(), // tool call id -> tool call view
  permissions: new Map(), // request id -> permission view
};

const rpc = new Rpc(onNotification, onConnection);
const canvases = new CanvasPanes($("canvases"), {
  onAction: (instanceId, actionName, input) => canvasAction(instanceId, actionName, input),
  onClose: (instanceId) => attempt(() => rpc.request("closeCanvas", { session: state.current, instanceId })),
  onCount: (panes) => document.querySelector("main.layout").classList.toggle("with-canvases", panes > 0),
});

function notice(text) {
  $("notice").textContent = text ?? "";
}

async function attempt(work) {
  try {
    notice("");
    return await work();
  } catch (error) {
    notice(error.message);
    return undefined;
  }
}

// -- connecting ----------------------------------------------------------------------------

async function onConnection(status) {
  state.connected = status === "open";
  $("connection").textContent = state.connected ? "connected" : "reconnecting…";
  $("connection").className = `badge ${state.connected ? "ok" : "warn"}`;
  if (!state.connected) {
    updateControls();
    return;
  }
  await attempt(async () => {
    if (state.initialized) {
      const subscriptions = state.current ? [state.current] : [];
      const answer = await rpc.request("reconnect", {
        clientId: state.clientId,
        lastSeenServerSeq: state.lastSeq,
        subscriptions,
        capabilities: CAPABILITIES,
      });
      if (answer.type === "replay") for (const envelope of answer.actions) onEnvelope(envelope);
      else for (const snapshot of answer.snapshots) showSnapshot(snapshot);
      if (answer.missing.includes(state.current)) closeSession();
    } else {
      const answer = await rpc.request("initialize", {
        protocolVersions: [PROTOCOL_VERSION],
        clientId: state.clientId,
        capabilities: CAPABILITIES,
      });
      state.lastSeq = answer.serverSeq;
      state.initialized = true;
    }
    const listed = await rpc.request("listSessions", {});
    state.sessions = new Map(listed.items.map((summary) => [summary.resource, summary]));
    renderSessions();
  });
  updateControls();
}

function onNotification(method, params) {
  if (method === "action") onEnvelope(params);
  else if (method === "notify/sessionAdded") {
    state.sessions.set(params.summary.resource, params.summary);
    renderSessions();
  } else if (method === "notify/sessionRemoved") {
    state.sessions.delete(params.session);
    if (params.session === state.current) closeSession();
    renderSessions();
  }
}

// -- sessions ------------------------------------------------------------------------------

function renderSessions() {
  const list = $("session-list");
  list.replaceChildren();
  for (const [uri, summary] of state.sessions) {
    const item = element("li", uri === state.current ? "current" : "");
    const open = element("button", "open", summary.title || uri);
    open.type = "button";
    open.title = uri;
    open.addEventListener("click", () => attempt(() => openSession(uri)));
    item.append(open, element("span", `badge ${summary.status}`, summary.status));
    list.append(item);
  }
  $("no-sessions").hidden = state.sessions.size > 0;
  const summary = state.sessions.get(state.current);
  $("session-title").textContent = summary ? summary.title || summary.resource : "No session open";
  $("session-status").textContent = summary ? summary.status : "";
  $("session-status").className = `badge ${summary ? summary.status : ""}`;
}

async function createSession(fork) {
  const uri = `copilot:/${randomId()}`;
  const params = { session: uri };
  if (fork) params.fork = fork;
  await rpc.request("createSession", params);
  await openSession(uri);
}

async function openSession(uri) {
  if (state.current && state.current !== uri) rpc.socket.send(JSON.stringify({ jsonrpc: "2.0", method: "unsubscribe", params: { resource: state.current } }));
  const answer = await rpc.request("subscribe", { resource: uri });
  showSnapshot(answer.snapshot);
  await refreshExtensions();
}

function closeSession() {
  state.current = null;
  clearTurns();
  canvases.clear();
  $("extension-list").replaceChildren();
  renderSessions();
  updateControls();
}

async function disposeSession() {
  const uri = state.current;
  if (uri && confirm(`Dispose of ${uri}? Its extensions stop; its log stays on disk.`)) {
    await rpc.request("disposeSession", { session: uri });
  }
}

function showSnapshot(snapshot) {
  const sessionState = snapshot.state;
  state.current = snapshot.resource;
  state.sessions.set(snapshot.resource, sessionState.summary);
  clearTurns();
  canvases.clear();
  for (const turn of sessionState.turns) showTurn(turn, false);
  if (sessionState.activeTurn) showTurn(sessionState.activeTurn, true);
  for (const canvas of sessionState.openCanvases ?? []) canvases.open(canvas);
  $("earlier-turns").hidden = sessionState.turns.length === 0;
  renderSessions();
  updateControls();
  scrollDown(true);
}

async function earlierTurns() {
  const answer = await rpc.request("fetchTurns", { session: state.current, before: state.firstTurn, limit: 20 });
  const first = $("turns").firstChild;
  for (const turn of answer.turns) {
    if (state.turns.has(turn.id)) continue;
    showTurn(turn, false);
    $("turns").insertBefore(state.turns.get(turn.id).root, first);
  }
  if (answer.turns.length) state.firstTurn = answer.turns[0].id;
  $("earlier-turns").hidden = !answer.hasMore;
}

// -- turns -----------------------------------------------------------------------------------

function clearTurns() {
  $("turns").replaceChildren();
  for (const map of [state.turns, state.parts, state.calls, state.permissions]) map.clear();
  state.activeTurn = state.firstTurn = state.lastFinished = null;
}

function turnView(turnId, userText) {
  let view = state.turns.get(turnId);
  if (view) return view;
  const root = element("article", "turn");
  root.dataset.turn = turnId;
  const parts = element("div", "parts");
  const foot = element("div", "foot");
  const status = element("span", "badge");
  const fork = element("button", "small", "Fork from here");
  fork.type = "button";
  fork.hidden = true;
  fork.addEventListener("click", () => attempt(() => createSession({ session: state.current, turnId })));
  foot.append(status, element("span", "spacer"), fork);
  root.append(element("div", "user", userText), parts, foot);
  $("turns").append(root);
  view = { root, parts, foot, status, fork };
  state.turns.set(turnId, view);
  state.firstTurn ??= turnId;
  return view;
}

function showTurn(turn, active) {
  const view = turnView(turn.id, turn.userMessage?.text ?? "");
  for (const part of turn.responseParts) {
    if (part.kind === "markdown") textPart(turn.id, part.id, part.content);
    else if (part.kind === "toolCall") showCall(turn.id, part.toolCall);
  }
  for (const request of Object.values(turn.pendingPermissions ?? {})) showPermission(turn.id, request);
  if (active) {
    state.activeTurn = turn.id;
    setTurnStatus(view, "in-progress");
  } else endTurn(turn.id, turn.state, turn.error);
}

function setTurnStatus(view, text) {
  view.status.textContent = text;
  view.status.className = `badge ${text}`;
}

function endTurn(turnId, how, error) {
  const view = state.turns.get(turnId);
  if (!view) return;
  setTurnStatus(view, how);
  if (error) view.parts.append(element("div", "error", `${error.errorType ?? "error"}: ${error.message ?? ""}`));
  for (const request of state.permissions.values()) if (request.turnId === turnId) settlePermission(request, null);
  view.fork.hidden = how !== "complete";
  if (how === "complete") state.lastFinished = turnId;
  if (state.activeTurn === turnId) state.activeTurn = null;
  updateControls();
}

function textPart(turnId, partId, content) {
  const view = state.turns.get(turnId);
  if (!view || state.parts.has(partId)) return;
  const node = element("div", "text", content);
  view.parts.append(node);
  state.parts.set(partId, { node, text: content ?? "", pending: "" });
}

// Deltas are joined and written once per frame: a fast stream costs one layout per frame.
let flushScheduled = false;
function appendDelta(partId, content) {
  const part = state.parts.get(partId);
  if (!part) return;
  part.pending += content;
  if (!flushScheduled) {
    flushScheduled = true;
    requestAnimationFrame(flushDeltas);
  }
}

function flushDeltas() {
  flushScheduled = false;
  const follow = nearBottom();
  for (const part of state.parts.values()) {
    if (!part.pending) continue;
    part.text += part.pending;
    part.pending = "";
    part.node.textContent = part.text;
  }
  scrollDown(follow);
}

function nearBottom() {
  const turns = $("turns");
  return turns.scrollHeight - turns.scrollTop - turns.clientHeight < 80;
}

function scrollDown(follow) {
  if (follow) $("turns").scrollTop = $("turns").scrollHeight;
}

// -- tool calls ------------------------------------------------------------------------------

function callView(turnId, callId, name) {
  let view = state.calls.get(callId);
  if (view) return view;
  const turn = state.turns.get(turnId);
  const root = element("details", "tool");
  root.dataset.call = callId;
  const summary = element("summary");
  const title = element("span", "name", name);
  const status = element("span", "badge");
  summary.append(title, status);
  const body = element("div", "body");
  root.append(summary, body);
  turn?.parts.append(root);
  view = { root, title, status, body, sections: new Map() };
  state.calls.set(callId, view);
  return view;
}

function callSection(view, label, make) {
  let section = view.sections.get(label);
  if (!section) {
    section = make();
    view.sections.set(label, section);
    view.body.append(element("div", "label", label), section);
  }
  return section;
}

function setCallStatus(view, status) {
  view.status.textContent = status;
  view.status.className = `badge ${status}`;
}

function showArguments(view, toolInput) {
  if (toolInput === null || toolInput === undefined) return;
  let shown = toolInput;
  try {
    shown = JSON.stringify(JSON.parse(toolInput), null, 2);
  } catch {
    /* shown as it came */
  }
  callSection(view, "Arguments", () => element("pre", "arguments")).textContent = shown;
}

function showResult(view, result) {
  const texts = [];
  for (const item of result.content ?? []) {
    if (item.type === "text") texts.push(item.text);
    else if (item.type === "resource") texts.push(`[the whole result: ${item.uri}]`);
  }
  const shown = texts.join("\n");
  callSection(view, "Result", () => element("pre", "result")).textContent = shown;
  if (result.error?.message && result.error.message !== shown) callSection(view, "Error", () => element("div", "error")).textContent = result.error.message;
  const decisions = result._meta?.hookDecisions ?? [];
  if (decisions.length) {
    const list = callSection(view, "Hooks", () => element("ul", "hooks"));
    list.replaceChildren();
    for (const decided of decisions) {
      const what = decided.decision ?? decided.outcome;
      const line = `${decided.extension} decided ${what}${decided.error ? `: ${decided.error}` : ""} (${decided.hook})`;
      list.append(element("li", String(decided.decision ?? ""), line));
    }
    if (decisions.some((decided) => decided.decision === "deny")) view.root.open = true;
  }
}

function showCall(turnId, call) {
  const view = callView(turnId, call.toolCallId, call.displayName || call.toolName);
  showArguments(view, call.toolInput);
  if (call.status === "completed") {
    setCallStatus(view, call.success === false ? "failed" : "completed");
    showResult(view, call);
  } else setCallStatus(view, call.status === "cancelled" ? call.reason ?? "cancelled" : call.status);
}

// -- permissions -----------------------------------------------------------------------------

function showPermission(turnId, request) {
  if (state.permissions.has(request.requestId)) return;
  const root = element("div", "permission");
  root.dataset.request = request.requestId;
  const subject = request.toolName ? `${request.toolName} needs your approval` : `${request.permissionKind} needs your approval`;
  root.append(element("strong", "", subject));
  if (request.message) root.append(element("div", "", request.message));
  if (request.toolInput) root.append(element("pre", "", request.toolInput));
  const feedback = element("input");
  feedback.placeholder = "Feedback for the agent (optional)";
  feedback.setAttribute("aria-label", "Feedback");
  const buttons = element("div", "buttons");
  const approve = element("button", "primary", "Approve");
  const deny = element("button", "", "Deny");
  approve.type = deny.type = "button";
  buttons.append(approve, deny);
  root.append(feedback, buttons);
  const view = { root, turnId, buttons, feedback, requestId: request.requestId };
  const answer = (approved) =>
    attempt(() =>
      dispatch({
        type: "session/permissionResolved",
        session: state.current,
        turnId,
        requestId: request.requestId,
        approved,
        ...(feedback.value ? { feedback: feedback.value } : {}),
      }),
    );
  approve.addEventListener("click", () => answer(true));
  deny.addEventListener("click", () => answer(false));
  state.permissions.set(request.requestId, view);
  state.turns.get(turnId)?.parts.append(root);
  scrollDown(true);
}

function settlePermission(view, action, origin) {
  if (!view.buttons.isConnected) return;
  view.feedback.remove();
  let text = "no longer asked";
  if (action) {
    const who = !origin ? "the host" : origin.clientId === state.clientId ? "you" : `client ${origin.clientId}`;
    text = `${action.approved ? "Approved" : "Denied"} by ${who}${action.feedback ? `: ${action.feedback}` : ""}`;
  }
  view.buttons.replaceWith(element("div", action?.approved ? "muted" : "error", text));
}

// -- actions -----------------------------------------------------------------------------------

function onEnvelope(envelope) {
  state.lastSeq = Math.max(state.lastSeq, envelope.serverSeq);
  const action = envelope.action;
  if (action.session !== state.current) return;
  const turnId = action.turnId;
  switch (action.type) {
    case "session/turnStarted":
      turnView(turnId, action.userMessage?.text ?? "");
      state.activeTurn = turnId;
      setTurnStatus(state.turns.get(turnId), "in-progress");
      scrollDown(true);
      break;
    case "session/responsePart":
      if (action.part.kind === "markdown") textPart(turnId, action.part.id, action.part.content);
      break;
    case "session/delta":
      appendDelta(action.partId, action.content);
      break;
    case "session/toolCallStart":
      setCallStatus(callView(turnId, action.toolCallId, action.displayName || action.toolName), "streaming");
      break;
    case "session/toolCallReady": {
      const view = state.calls.get(action.toolCallId);
      if (view) {
        showArguments(view, action.toolInput);
        setCallStatus(view, action.confirmed ? "running" : "pending-confirmation");
      }
      break;
    }
    case "session/toolCallComplete": {
      const view = state.calls.get(action.toolCallId);
      if (view) {
        setCallStatus(view, action.result.success ? "completed" : "failed");
        showResult(view, action.result);
      }
      break;
    }
    case "session/permissionRequest":
      showPermission(turnId, action.request);
      if (action.request.toolCallId && state.calls.has(action.request.toolCallId)) {
        setCallStatus(state.calls.get(action.request.toolCallId), "pending-confirmation");
      }
      break;
    case "session/permissionResolved": {
      const view = state.permissions.get(action.requestId);
      if (view) settlePermission(view, action, envelope.origin);
      break;
    }
    case "session/turnComplete":
      endTurn(turnId, "complete");
      refreshExtensions();
      break;
    case "session/turnCancelled":
      endTurn(turnId, "cancelled");
      break;
    case "session/error":
      endTurn(turnId, "error", action.error);
      break;
    case "session/titleChanged":
    case "session/modelChanged":
      if (action.title !== undefined) state.sessions.get(state.current).title = action.title;
      renderSessions();
      break;
    default:
      if (action.type.startsWith("session/canvas")) canvasEvent(action);
  }
  if (["session/turnStarted", "session/turnComplete", "session/turnCancelled", "session/error", "session/permissionRequest", "session/permissionResolved"].includes(action.type)) {
    const summary = state.sessions.get(state.current);
    if (summary) summary.status = state.activeTurn ? (hasOpenPermission() ? "input-needed" : "in-progress") : action.type === "session/error" ? "error" : "idle";
    renderSessions();
    updateControls();
  }
}

function hasOpenPermission() {
  return [...state.permissions.values()].some((view) => view.buttons.isConnected);
}

async function dispatch(action) {
  state.clientSeq += 1;
  await rpc.request("dispatchAction", { clientSeq: state.clientSeq, action });
}

// -- canvases: the server's canvas actions reach the panes here, their buttons the server --------

function canvasEvent(action) {
  if (action.type === "session/canvasOpened" && action.canvas) canvases.open(action.canvas);
  else if (action.type === "session/canvasClosed") canvases.close(action.instanceId);
}

async function canvasAction(instanceId, actionName, input) {
  const params = { session: state.current, instanceId, actionName, ...(input === null ? {} : { input }) };
  const answer = await rpc.request("invokeCanvasAction", params);
  return answer.result;
}

// -- the prompt and its completions ------------------------------------------------------------

const completion = { items: [], selected: 0, timer: null, asked: 0 };

async function sendPrompt() {
  const text = $("prompt-text").value;
  if (!text.trim() || !state.current) return;
  hideCompletions();
  const ok = await attempt(async () => {
    await dispatch({ type: "session/turnStarted", session: state.current, turnId: randomId(), userMessage: { text } });
    return true;
  });
  if (ok) $("prompt-text").value = "";
}

function cancelTurn() {
  if (state.activeTurn) attempt(() => dispatch({ type: "session/turnCancelled", session: state.current, turnId: state.activeTurn }));
}

function wantsCompletion(text, offset) {
  const word = text.slice(0, offset).split(/\s/).pop();
  return (text.startsWith("/") && !/\s/.test(text.slice(0, offset))) || word.startsWith("@");
}

function askCompletions() {
  clearTimeout(completion.timer);
  const box = $("prompt-text");
  const text = box.value;
  const offset = box.selectionStart;
  if (!state.current || !wantsCompletion(text, offset)) {
    hideCompletions();
    return;
  }
  completion.timer = setTimeout(async () => {
    const asked = ++completion.asked;
    const answer = await attempt(() => rpc.request("completions", { kind: "userMessage", session: state.current, text, offset }));
    if (asked !== completion.asked || !answer) return;
    showCompletions(answer.items);
  }, COMPLETION_DELAY_MS);
}

function showCompletions(items) {
  completion.items = items;
  completion.selected = 0;
  const list = $("completions");
  list.replaceChildren();
  items.forEach((item, index) => {
    const row = element("li", "", "");
    row.setAttribute("role", "option");
    row.append(element("span", "insert", item.insertText));
    const detail = item.attachment?._meta?.description ?? item.attachment?.uri ?? "";
    if (detail) row.append(element("span", "detail", detail));
    row.addEventListener("mousedown", (event) => {
      event.preventDefault();
      insertCompletion(index);
    });
    list.append(row);
  });
  list.hidden = items.length === 0;
  markSelected();
}

function markSelected() {
  [...$("completions").children].forEach((row, index) => row.setAttribute("aria-selected", String(index === completion.selected)));
}

function hideCompletions() {
  completion.items = [];
  $("completions").hidden = true;
}

function insertCompletion(index) {
  const item = completion.items[index];
  if (!item) return;
  const box = $("prompt-text");
  const text = box.value;
  box.value = `${text.slice(0, item.rangeStart)}${item.insertText} ${text.slice(item.rangeEnd)}`;
  const cursor = item.rangeStart + item.insertText.length + 1;
  box.setSelectionRange(cursor, cursor);
  box.focus();
  hideCompletions();
}

function onPromptKey(event) {
  const open = !$("completions").hidden && completion.items.length > 0;
  if (open && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
    event.preventDefault();
    const step = event.key === "ArrowDown" ? 1 : -1;
    completion.selected = (completion.selected + step + completion.items.length) % completion.items.length;
    markSelected();
  } else if (open && (event.key === "Tab" || event.key === "Enter")) {
    event.preventDefault();
    insertCompletion(completion.selected);
  } else if (open && event.key === "Escape") {
    hideCompletions();
  } else if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    sendPrompt();
  }
}

// -- extensions ------------------------------------------------------------------------------

async function refreshExtensions() {
  if (!state.current) return;
  const uri = state.current;
  const answer = await attempt(() => rpc.request("listExtensions", { session: uri }));
  if (answer && uri === state.current) showExtensions(answer.items);
}

function showExtensions(items) {
  const list = $("extension-list");
  list.replaceChildren();
  if (items.length === 0) list.append(element("li", "muted", "This session has no extension."));
  for (const info of items) {
    const item = element("li");
    item.dataset.extension = info.name;
    const name = element("div", "name", info.name);
    const reload = element("button", "small", "Reload");
    reload.type = "button";
    reload.addEventListener("click", () => reloadExtensions(info.id));
    name.append(element("span", `badge ${info.status}`, info.status), element("span", "spacer"), reload);
    item.append(name, element("div", "detail", `${info.source}`));
    if (info.tools.length) item.append(element("div", "detail", `tools: ${info.tools.join(", ")}`));
    if (info.hooks.length) item.append(element("div", "detail", `hooks: ${info.hooks.join(", ")}`));
    if (info.commands.length) item.append(element("div", "detail", `commands: ${info.commands.map((c) => `/${c}`).join(", ")}`));
    if (info.canvases?.length) item.append(element("div", "detail", `canvases: ${info.canvases.join(", ")}`));
    if (info.error) item.append(element("div", "detail error", info.error));
    list.append(item);
  }
}

async function reloadExtensions(extension) {
  const uri = state.current;
  const params = { session: uri, ...(extension ? { extension } : {}) };
  $("reload-extensions").disabled = true;
  const answer = await attempt(() => rpc.request("reloadExtensions", params));
  if (answer && uri === state.current) {
    showExtensions(answer.items);
    const failed = answer.outcomes.filter((outcome) => outcome.error);
    notice(failed.length ? failed.map((o) => `${o.extension}: ${o.error}`).join("; ") : `reloaded ${answer.outcomes.length}`);
  }
  updateControls();
}

// -- controls --------------------------------------------------------------------------------

function updateControls() {
  const open = state.connected && state.current !== null;
  $("new-session").disabled = !state.connected;
  $("prompt-text").disabled = !open;
  $("send").disabled = !open;
  $("cancel-turn").disabled = !open || state.activeTurn === null;
  $("dispose-session").disabled = !open;
  $("fork-session").disabled = !open || state.lastFinished === null || state.activeTurn !== null;
  $("reload-extensions").disabled = !open || state.activeTurn !== null;
}

$("new-session").addEventListener("click", () => attempt(() => createSession()));
$("dispose-session").addEventListener("click", () => attempt(disposeSession));
$("fork-session").addEventListener("click", () => attempt(() => createSession({ session: state.current, turnId: state.lastFinished })));
$("earlier-turns").addEventListener("click", () => attempt(earlierTurns));
$("reload-extensions").addEventListener("click", () => reloadExtensions());
$("cancel-turn").addEventListener("click", cancelTurn);
$("prompt").addEventListener("submit", (event) => {
  event.preventDefault();
  sendPrompt();
});
$("prompt-text").addEventListener("keydown", onPromptKey);
$("prompt-text").addEventListener("input", askCompletions);
$("prompt-text").addEventListener("blur", () => setTimeout(hideCompletions, 150));

updateControls();
rpc.connect();
