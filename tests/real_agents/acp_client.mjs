// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk, its `client()`
// app over `ndJsonStream`), driving one agent program over its stdio through a list of steps:
//
//   node acp_client.mjs SCRIPT.json
//
// SCRIPT: {"sdk": absolute path of the SDK's entry module, "command": [agent argv...], "cwd",
//          "timeout_ms": the whole run's bound, "request_timeout_ms": each request's bound,
//          "steps": [...]}. Each step is an object with "do":
//   initialize  {clientCapabilities?}: fs (read and write) and terminal are offered by default
//   new         {cwd?}: session/new; later steps use the newest session
//   prompt      {text, permissions?: [optionKind...], cancel_on?: "any" | a sessionUpdate kind}
//               permissions answer the turn's session/request_permission calls in order, each
//               by the option of that kind ("cancelled": the cancelled outcome); with cancel_on,
//               session/cancel is sent on the turn's first update (of that kind), and every
//               permission request after it is answered "cancelled"
//   load        {cwd?}: session/load of the newest session
//   restart     {}: the agent is stopped (stdin closed, then signals) and started again
//
// Every message both ways is printed as a JSON line, {"sent": message} or {"received": message}
// (as the SDK writes and reads them), each step's end as {"step": n, "do", "result"|"error"},
// each client method the agent called as {"call": method, "params"}, and at the end
// {"done": true, "ok": bool}. A step that fails ends the run unless it says "may_fail": true. Every wait is bounded; the agent is always stopped and reaped.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
const acp = await import(pathToFileURL(script.sdk).href);
const requestTimeout = script.request_timeout_ms ?? 60000;
const emit = (value) => process.stdout.write(JSON.stringify(value) + "\n");

const overall = setTimeout(() => {
  emit({ done: true, ok: false, error: `the run took over ${script.timeout_ms} ms` });
  stopAgent().finally(() => process.exit(3));
}, script.timeout_ms ?? 120000);

function bounded(promise, what, ms = requestTimeout) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// The client side's state: the newest session, the permission answers, the terminals.
let sessionId = null;
let permissionAnswers = [];
let cancelOn = null;
let cancelledSessions = new Set();
const terminals = new Map();
let terminalCount = 0;

function record(method, params) {
  emit({ call: method, params });
}

function answerPermission(params) {
  if (cancelledSessions.has(params.sessionId)) return { outcome: { outcome: "cancelled" } };
  const kind = permissionAnswers.shift();
  if (kind === undefined || kind === "cancelled") return { outcome: { outcome: "cancelled" } };
  const option = params.options.find((candidate) => candidate.kind === kind);
  if (option === undefined) throw acp.RequestError.invalidParams(undefined, `no option of kind ${kind}`);
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}

function inside(path) {
  if (!isAbsolute(path) || !path.startsWith(script.cwd + "/")) {
    throw acp.RequestError.invalidParams(undefined, `${path} is outside ${script.cwd}`);
  }
  return path;
}

function createTerminal(params) {
  const id = `term-${++terminalCount}`;
  const limit = params.outputByteLimit ?? 65536;
  const child = spawn(params.command, params.args ?? [], {
    cwd: params.cwd ?? script.cwd,
    env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const terminal = { child, output: "", truncated: false, exit: null };
  const add = (chunk) => {
    terminal.output += chunk.toString();
    if (Buffer.byteLength(terminal.output) > limit) {
      terminal.output = terminal.output.slice(-limit);
      terminal.truncated = true;
    }
  };
  child.stdout.on("data", add);
  child.stderr.on("data", add);
  terminal.exited = new Promise((resolve) => {
    child.on("close", (exitCode, signal) => {
      terminal.exit = { exitCode, signal };
      resolve(terminal.exit);
    });
    child.on("error", (error) => {
      add(String(error));
      terminal.exit = { exitCode: 127, signal: null };
      resolve(terminal.exit);
    });
  });
  terminals.set(id, terminal);
  return { terminalId: id };
}

function terminal(params) {
  const found = terminals.get(params.terminalId);
  if (found === undefined) throw acp.RequestError.invalidParams(undefined, `no terminal ${params.terminalId}`);
  return found;
}

const app = acp
  .client({ name: "acp-real-client" })
  .onRequest("session/request_permission", ({ params }) => {
    record("session/request_permission", params);
    return answerPermission(params);
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    record("fs/read_text_file", params);
    let lines = readFileSync(inside(params.path), "utf8").split("\n");
    const start = Math.max(0, (params.line ?? 1) - 1);
    lines = lines.slice(start, params.limit == null ? undefined : start + params.limit);
    return { content: lines.join("\n") };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    record("fs/write_text_file", params);
    mkdirSync(dirname(inside(params.path)), { recursive: true });
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("terminal/create", ({ params }) => {
    record("terminal/create", params);
    return createTerminal(params);
  })
  .onRequest("terminal/output", ({ params }) => {
    record("terminal/output", params);
    const found = terminal(params);
    return { output: found.output, truncated: found.truncated, exitStatus: found.exit };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    record("terminal/wait_for_exit", params);
    return await bounded(terminal(params).exited, `terminal ${params.terminalId}`);
  })
  .onRequest("terminal/kill", ({ params }) => {
    record("terminal/kill", params);
    terminal(params).child.kill("SIGKILL");
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    record("terminal/release", params);
    terminal(params).child.kill("SIGKILL");
    terminals.delete(params.terminalId);
    return {};
  })
  .onNotification("session/update", async ({ params, agent }) => {
    const kind = params.update?.sessionUpdate;
    if (cancelOn !== null && params.sessionId === sessionId && (cancelOn === "any" || cancelOn === kind)) {
      cancelOn = null;
      cancelledSessions.add(sessionId);
      await agent.notify("session/cancel", { sessionId });
    }
  });

// The agent process and the connection to it.
let child = null;
let connection = null;

function startAgent() {
  const [program, ...args] = script.command;
  child = spawn(program, args, { cwd: script.cwd, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("close", resolve));
  child.exitedPromise = exited;
  child.on("error", (error) => emit({ agent_error: String(error) }));
  const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const readable = wire.readable.pipeThrough(
    new TransformStream({
      transform(message, controller) {
        emit({ received: message });
        controller.enqueue(message);
      },
    }),
  );
  const tap = new TransformStream({
    transform(message, controller) {
      emit({ sent: message });
      controller.enqueue(message);
    },
  });
  tap.readable.pipeTo(wire.writable).catch(() => {});
  connection = app.connect({ readable, writable: tap.writable });
}

async function stopAgent() {
  if (child === null) return;
  const stopping = child;
  child = null;
  connection?.close();
  stopping.stdin.destroy();
  const gone = (ms) => bounded(stopping.exitedPromise, "agent exit", ms).then(() => true, () => false);
  if (stopping.exitCode !== null || stopping.signalCode !== null) return;
  if (await gone(3000)) return;
  stopping.kill("SIGTERM");
  if (await gone(3000)) return;
  stopping.kill("SIGKILL");
  await gone(5000);
}

const CAPABILITIES = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

async function run(step) {
  const agent = connection.agent;
  switch (step.do) {
    case "initialize":
      return await bounded(
        agent.request("initialize", {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: step.clientCapabilities ?? CAPABILITIES,
          clientInfo: { name: "acp-real-client", version: "1.0.0" },
        }),
        "initialize",
      );
    case "new": {
      const result = await bounded(
        agent.request("session/new", { cwd: step.cwd ?? script.cwd, mcpServers: [] }),
        "session/new",
      );
      sessionId = result.sessionId;
      return result;
    }
    case "prompt": {
      permissionAnswers = [...(step.permissions ?? [])];
      cancelOn = step.cancel_on ?? null;
      const result = await bounded(
        agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: step.text }] }),
        "session/prompt",
      );
      cancelOn = null;
      return result;
    }
    case "load":
      return await bounded(
        agent.request("session/load", { sessionId, cwd: step.cwd ?? script.cwd, mcpServers: [] }),
        "session/load",
      );
    case "restart":
      await stopAgent();
      cancelledSessions = new Set();
      startAgent();
      return {};
    default:
      throw new Error(`unknown step ${JSON.stringify(step)}`);
  }
}

let ok = true;
try {
  startAgent();
  for (const [index, step] of script.steps.entries()) {
    try {
      emit({ step: index, do: step.do, result: (await run(step)) ?? null });
    } catch (error) {
      ok = ok && Boolean(step.may_fail);
      const described = { message: error?.message ?? String(error), code: error?.code ?? null };
      emit({ step: index, do: step.do, error: described });
      if (!step.may_fail) break;
    }
  }
} finally {
  for (const open of terminals.values()) open.child.kill("SIGKILL");
  await stopAgent();
  clearTimeout(overall);
  emit({ done: true, ok });
}
