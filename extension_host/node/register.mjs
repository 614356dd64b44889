// Loaded with `node --import` before a JavaScript extension (extension.mjs/.cjs/.js) runs.
// 1. Makes `@github/copilot-sdk` and `@github/copilot-sdk/...` resolve to the copy of the SDK the
//    host installed (EXTENSION_HOST_NODE_SDK), so authors need no `npm install`, as in Copilot CLI.
// 2. Exits when the host is gone, even if the extension never joined (the SDK itself exits when
//    its stdin closes, but only once it has joined).
// 3. Sends console.log/info/debug to stderr (the extension's log): stdout is the protocol.
import { register } from "node:module";

console.log = console.error;
console.info = console.error;
console.debug = console.error;

register(new URL("./resolve.mjs", import.meta.url), {
  data: { sdkRoot: process.env.EXTENSION_HOST_NODE_SDK ?? "" },
});

const parent = Number(process.env.EXTENSION_HOST_PARENT_PID);
if (Number.isInteger(parent) && parent > 0) {
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();
}
