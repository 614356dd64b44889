// The canvas panes: one per open canvas, its content in a sandboxed frame, its actions as buttons.
//
// A canvas is the SDK's open-canvas shape (OpenCanvasInstance, with CanvasProviderOpenResult's
// url, title and status) plus the actions its declaration lists ({name, description}):
//   {instanceId, extensionId, extensionName?, canvasId, title?, status?, url?, actions?: [...]}
// Its content is the page its extension serves at `url`, shown in an
// <iframe sandbox="allow-scripts"> without allow-same-origin: its scripts run in an opaque
// origin, so they can reach neither this page, its token, nor its WebSocket. Only http(s) URLs
// of this machine (127.0.0.1, localhost) are framed, as the page's Content-Security-Policy
// allows; any other is named as text and not opened. Every text here is set as text.
//
// This module knows panes and frames; which protocol messages open, close and act on a canvas
// is its caller's (`onAction(instanceId, actionName)`, `onClose(instanceId)`).

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
  /** `container`: where the panes go; `onAction(instanceId, actionName)` when a button is pressed. */
  constructor(container, { onAction = () => {}, onClose = () => {} } = {}) {
    this.container = container;
    this.onAction = onAction;
    this.onClose = onClose;
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
    pane.title.textContent = canvas.title || canvas.canvasId || id;
    pane.owner.textContent = canvas.extensionName || canvas.extensionId || "";
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
    root.append(heading, body, buttons);
    return { root, title, owner, status, body, buttons, url: undefined };
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
      const button = element("button", "small", name);
      button.type = "button";
      if (action.description) button.title = String(action.description);
      button.addEventListener("click", () => this.onAction(id, name));
      pane.buttons.append(button);
    }
  }

  #emptiness() {
    if (this.empty) this.empty.hidden = this.panes.size > 0;
  }
}
