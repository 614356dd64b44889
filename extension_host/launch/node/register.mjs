// Loaded with `node --import` before a JavaScript extension (extension.mjs/.cjs/.js) runs.
// 1. Makes `@github/copilot-sdk` and `@github/copilot-sdk/...` resolve to the copy of the SDK the
//    host installed (EXTENSION_HOST_NODE_SDK), or to the SDK build it was given
//    (EXTENSION_HOST_SDK_BUILD), so authors need no `npm install`, as in Copilot CLI.
// 2. Ends the extension and its whole process group when the host is gone, even if it never
//    joined (the SDK itself exits when its stdin closes, but only once it has joined): the host's
//    lifeline pipe (EXTENSION_HOST_LIFELINE_FD) reaches end of file the moment the host process
//    ends, SIGKILL included; without one, the parent pid is polled.
// 3. Sends console.log/info/debug to stderr (the extension's log): stdout is the protocol.
import { register } from "node:module";
import fs from "node:fs";
import net from "node:net";

console.log = console.error;
console.info = console.error;
console.debug = console.error;

register(new URL("./resolve.mjs", import.meta.url), {
  data: { sdkRoot: process.env.EXTENSION_HOST_NODE_SDK ?? "", sdkBuild: process.env.EXTENSION_HOST_SDK_BUILD ?? "" },
});

const parent = Number(process.env.EXTENSION_HOST_PARENT_PID);
const orphaned = () => Number.isInteger(parent) && parent > 0 && process.ppid !== parent;

function killGroup() {
  try {
    // The host starts a Node extension as its group's leader: the group's id is its pid. If it
    // is not one (started by hand), there is no such group and nothing else is killed.
    process.kill(-process.pid, "SIGKILL");
  } catch {}
}

function goDown() {
  killGroup();
  process.exit(0);
}

function watchParent() {
  if (Number.isInteger(parent) && parent > 0) {
    setInterval(() => {
      if (orphaned()) goDown();
    }, 500).unref();
  }
}

// Linux: whether the host has begun to exit (PF_EXITING in its /proc/PID/stat, set before any of
// its descriptors closes).
function hostExiting() {
  try {
    const stat = fs.readFileSync(`/proc/${parent}/stat`, "latin1");
    return (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[6]) & 0x4) !== 0;
  } catch {
    return false;
  }
}

// The SDK exits by itself at the end of its stdin, which the host's death causes too, a moment
// before the lifeline ends: whichever notices first, the group goes.
process.on("exit", () => {
  if (orphaned() || (Number.isInteger(parent) && parent > 0 && hostExiting())) killGroup();
});

const lifeline = Number(process.env.EXTENSION_HOST_LIFELINE_FD);
delete process.env.EXTENSION_HOST_LIFELINE_FD; // what the extension starts has no lifeline of ours
let watching = false;
if (Number.isInteger(lifeline) && lifeline > 2) {
  try {
    const pipe = new net.Socket({ fd: lifeline, readable: true, writable: false });
    pipe.on("end", goDown);
    pipe.on("error", () => {}); // a descriptor that is not a pipe: nothing to watch on it
    pipe.resume();
    pipe.unref(); // never what keeps the extension alive
    watching = true;
  } catch {} // not open in this process: fall back to the parent pid
}
if (!watching) watchParent();
