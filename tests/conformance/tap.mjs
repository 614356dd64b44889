// Records this extension process's protocol traffic for the conformance suite: every chunk it
// reads on stdin and writes on stdout, in order, appended as JSON lines to
// $CONFORMANCE_TAP_DIR/<extension folder name>.jsonl ({d: "in"|"out", pid, b: base64}; first
// {d: "meta", pid, sdk}: the SDK it was given, COPILOT_SDK_PATH).
// Imported first by the extension (`import "./tap.mjs";`), before the SDK is loaded; without
// the variable it records nothing.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const folder = process.env.CONFORMANCE_TAP_DIR;
if (folder) {
  const name = path.basename(path.dirname(fileURLToPath(import.meta.url)));
  const file = path.join(folder, `${name}.jsonl`);
  const record = (direction, chunk, encoding) => {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8");
    fs.appendFileSync(file, JSON.stringify({ d: direction, pid: process.pid, b: bytes.toString("base64") }) + "\n");
  };
  // Which SDK this process was given (the first record of each process).
  fs.appendFileSync(file, JSON.stringify({ d: "meta", pid: process.pid, sdk: process.env.COPILOT_SDK_PATH ?? null }) + "\n");
  const write = process.stdout.write.bind(process.stdout);
  let listening = false;
  process.stdout.write = (chunk, encoding, callback) => {
    record("out", chunk, encoding);
    if (!listening) {
      // The SDK listens on stdin before it sends `connect`: nothing arrives before this write.
      listening = true;
      process.stdin.on("data", (data) => record("in", data));
    }
    return write(chunk, encoding, callback);
  };
}
