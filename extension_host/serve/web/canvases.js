// The canvas panes: one per open canvas, its content in a sandboxed frame, its actions as buttons.
//
// A canvas is the `canvas` of the server's `session/canvasOpened` action: the SDK's open-canvas
// shape (OpenCanvasInstance, with CanvasProviderOpenResult's url, title and status) plus what its
// declaration says (displayName, actions: [{name, description?, inputSchema?}]):
//   {instanceId, extensionId, canvasId, displayName?, title?, status?, url?, actions?: [...]}
// An action that declares an input schema gets a field for its input (JSON) beside its button.
// Its content is the page its extension serves at `url`, shown in an
// <iframe sandbox="allow-scripts"> without allow-same-origin: its scripts run in an opaque
// origin, so they can reach neither this page, its token, nor its WebSocket. Only http(s) URLs
// of this machine (127.0.0.1, localhost) are framed, as the page's Content-Security-Policy
// allows; any other is named as text and not opened. Every text here is set as text.
//
// This module knows panes and frames; which protocol messages open, close and act on a canvas
// is its caller's (`onAction(instanceId, actionName, input)`, which returns the action's result
// or throws, and `onClose(instanceId)`).

const FRAMED_HOSTS = new Set(["127.0.0.1", "localhost"]);

/** Whether `url` may be shown in a canvas frame: http(s) on this machine only. */
export function frameable(url) {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === "http:" || parsed.protocol === "https:") && FRAMED_HOSTS.has(parsed.hostname);
  } catch {
    return false;
  }
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export class CanvasPanes {
  /** `container`: where the panes go; `onAction(instanceId, actionName, input)` when a button is
   * pressed (its result, or its error, is shown under the buttons); `onClose(instanceId)`;
   * `onCount(panes)` whenever the number of panes changes. */
  constructor(container, { onAction = () => {}, onClose = () => {}, onCount = () => {} } = {}) {
    this.container = container;
    this.onAction = onAction;
    this.onClose = onClose;
    this.onCount = onCount;
    this.panes = new Map();
    this.empty = container.querySelector(".muted");
  }

  /** Show `canvas` (or update the pane of its instanceId: title, status, actions; the frame is
   * loaded again only when its url changes). */
  open(canvas) {
    const id = String(canvas.instanceId);
    let pane = this.panes.get(id);
    if (!pane) {
      pane = this.#make(id);
      this.panes.set(id, pane);
      this.container.append(pane.root);
    }
    pane.title.textContent = canvas.title || canvas.displayName || canvas.canvasId || id;
    pane.owner.textContent = canvas.extensionId || "";
    pane.status.textContent = canvas.status || "";
    this.#content(pane, canvas.url);
    this.#actions(pane, id, Array.isArray(canvas.actions) ? canvas.actions : []);
    this.#emptiness();
  }

  /** Remove the pane of `instanceId`, if there is one. */
  close(instanceId) {
    const pane = this.panes.get(String(instanceId));
    if (!pane) return;
    pane.root.remove();
    this.panes.delete(String(instanceId));
    this.#emptiness();
  }

  /** Remove every pane (another session was opened). */
  clear() {
    for (const id of [...this.panes.keys()]) this.close(id);
  }

  #make(id) {
    const root = element("section", "canvas");
    root.dataset.instance = id;
    const heading = element("div", "heading");
    const title = element("h3");
    const owner = element("span", "muted");
    const status = element("span", "badge");
    const close = element("button", "small", "Close");
    close.type = "button";
    close.addEventListener("click", () => this.onClose(id));
    heading.append(title, owner, status, element("span", "spacer"), close);
    const body = element("div", "body");
    const buttons = element("div", "buttons");
    const outcome = element("pre", "outcome");
    outcome.hidden = true;
    root.append(heading, body, buttons, outcome);
    return { root, title, owner, status, body, buttons, outcome, url: undefined };
  }

  #content(pane, url) {
    if (pane.url === url) return;
    pane.url = url;
    pane.body.replaceChildren();
    if (!url) {
      pane.body.append(element("p", "muted", "This canvas shows no page."));
      return;
    }
    if (!frameable(url)) {
      pane.body.append(element("p", "muted", `Not shown: ${url} is not a page of this machine.`));
      return;
    }
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.setAttribute("title", pane.title.textContent);
    frame.src = url;
    pane.body.append(frame);
  }

  #actions(pane, id, actions) {
    pane.buttons.replaceChildren();
    for (const action of actions) {
      const name = String(action.name ?? "");
      if (!name) continue;
      const row = element("div", "action");
      row.dataset.action = name;
      const button = element("button", "small", name);
      button.type = "button";
      if (action.description) button.title = String(action.description);
      let field = null;
      if (action.inputSchema) {
        field = element("input", "input");
        field.placeholder = `input of ${name} (JSON)`;
        field.setAttribute("aria-label", `Input of ${name}`);
      }
      button.addEventListener("click", () => this.#invoke(pane, id, name, field, button));
      row.append(button);
      if (field) row.append(field);
      pane.buttons.append(row);
    }
  }

  async #invoke(pane, id, name, field, button) {
    let input = null;
    const text = field ? field.value.trim() : "";
    if (text) {
      try {
        input = JSON.parse(text);
      } catch {
        this.#outcome(pane, `The input of ${name} is not JSON: write an object like {"key": "value"}.`, true);
        return;
      }
    }
    button.disabled = true;
    try {
      const result = await this.onAction(id, name, input);
      this.#outcome(pane, `${name} → ${JSON.stringify(result ?? null)}`, false);
    } catch (error) {
      this.#outcome(pane, `${name} failed: ${error.message}`, true);
    } finally {
      button.disabled = false;
    }
  }

  #outcome(pane, text, failed) {
    pane.outcome.hidden = false;
    pane.outcome.className = failed ? "outcome error" : "outcome";
    pane.outcome.textContent = text;
  }

  #emptiness() {
    if (this.empty) this.empty.hidden = this.panes.size > 0;
    this.onCount(this.panes.size);
  }
}
