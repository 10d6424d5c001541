#!/usr/bin/env node
// client.mjs: scripted MCP test client on the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned in integration/package.json). The end-to-end tests run it against the real proxy binary.
//
// Usage:
//   node client.mjs [options] -- <command> [args...]       stdio (the client starts the server)
//   node client.mjs [options] --http URL                   Streamable HTTP
//   node client.mjs [options] --sse URL                    legacy HTTP+SSE
// Options:
//   --script FILE|JSON   JSON array of steps run in order (default: [{"op":"list"}], plus a call when --call)
//   --call NAME [--args JSON]   shorthand: list, then call NAME with ARGS
//   --client-name NAME   clientInfo.name sent in initialize (default "mcp-toolsearch-test-client")
//   --caps LIST          capabilities: comma list of roots,sampling,elicitation,tasks | all (roots,sampling,elicitation) | none (default none)
//   --elicit MODE        answer to elicitation/create: accept (default) | decline | cancel
//   --elicit-content JSON  content sent with accept (default: filled from the requested schema)
//   --sample-text TEXT   text of the answer to sampling/createMessage
//   --root URI           a root returned for roots/list (repeatable; default file:///tmp)
//   --header 'K: V'      extra HTTP header (repeatable; http/sse only)
//   --env K=V            extra environment for the stdio server (repeatable; the rest is inherited)
//   --timeout MS         per-request timeout (default 30000)
//   --quiet              discard the stdio server's stderr (default: passed through to ours)
// Steps ({"op": ...}; every step's outcome is {"result": <raw JSON-RPC result as received>} or
// {"error": {"code", "message", "data"}}; "sdkError" is added when the SDK rejected a result the
// wire carried, e.g. structuredContent not matching the tool's outputSchema):
//   list [cursor]         tools/list; without cursor follows nextCursor and returns
//                         {"tools": [all raw tools], "pages": N, "bytes": serialized bytes of all pages}
//   call name args [progress] [timeoutMs]   tools/call; with progress:true the request carries a
//                         progressToken and the step has "progress": [params of each notification]
//   listResources, listResourceTemplates, readResource uri, subscribe uri, unsubscribe uri,
//   listPrompts, getPrompt name args, complete ref argument, setLevel level, ping
//   request method params  any request (e.g. an unknown method), raw
//   notify method params   send a notification (e.g. notifications/roots/list_changed)
//   sleep ms               wait
//   wait notification [count] [timeoutMs]   wait until `count` (default 1) notifications with that
//                          method have arrived in total; error {code:-1} on timeout
// Output: ONE JSON document on stdout:
//   {client, transport, initialize: {protocolVersion, serverInfo, capabilities, instructions},
//    steps: [{op, ..., result|error}], timings: {connectMs, stepsMs, closeMs}, notifications: {method: count} (counted on the wire),
//    serverRequests: [{method, params}], clientErrors: [messages the SDK's Client.onerror got, e.g.
//    "Received a response for an unknown message ID"], error?: {code, message} (connect failure)}
// Exit status: 0 connected and every step ran (step errors are in the JSON), 1 usage or connect
// error (the JSON still has "error" when it got that far).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { readFileSync, existsSync } from "node:fs";

function usage(msg) {
  if (msg) console.error("client.mjs: " + msg);
  console.error("usage: client.mjs [--script FILE|JSON] [--call NAME --args JSON] [--client-name NAME] [--caps LIST] [--elicit accept|decline|cancel] (--http URL | --sse URL | -- cmd args...)");
  process.exit(1);
}

const argv = process.argv.slice(2);
const opt = { caps: "none", elicit: "accept", headers: {}, env: {}, roots: [], timeout: 30000, clientName: "mcp-toolsearch-test-client" };
let cmd = null;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
  switch (a) {
    case "--": cmd = argv.slice(i + 1); i = argv.length; break;
    case "--http": opt.http = next(); break;
    case "--sse": opt.sse = next(); break;
    case "--script": opt.script = next(); break;
    case "--call": opt.call = next(); break;
    case "--args": opt.args = next(); break;
    case "--client-name": opt.clientName = next(); break;
    case "--caps": opt.caps = next(); break;
    case "--elicit": opt.elicit = next(); if (!["accept", "decline", "cancel"].includes(opt.elicit)) usage("--elicit wants accept, decline or cancel"); break;
    case "--elicit-content": opt.elicitContent = next(); break;
    case "--sample-text": opt.sampleText = next(); break;
    case "--root": opt.roots.push(next()); break;
    case "--header": { const h = next(); const k = h.indexOf(":"); if (k < 1) usage(`bad --header ${JSON.stringify(h)}, want 'Key: value'`); opt.headers[h.slice(0, k).trim()] = h.slice(k + 1).trim(); break; }
    case "--env": { const kv = next(); const k = kv.indexOf("="); if (k < 1) usage(`bad --env ${JSON.stringify(kv)}, want KEY=VALUE`); opt.env[kv.slice(0, k)] = kv.slice(k + 1); break; }
    case "--timeout": opt.timeout = Number(next()); if (!(opt.timeout > 0)) usage("--timeout wants a positive number of ms"); break;
    case "--quiet": opt.quiet = true; break;
    case "-h": case "--help": usage();
    default: usage(`unknown option ${a}`);
  }
}
if ([cmd, opt.http, opt.sse].filter(Boolean).length !== 1) usage("need exactly one of --http URL, --sse URL, -- command");
if (cmd && cmd.length === 0) usage("empty command after --");

function parseJSON(what, text) {
  try { return JSON.parse(text); } catch (e) { usage(`${what} is not JSON: ${e.message}`); }
}
let steps;
if (opt.script) {
  const text = existsSync(opt.script) ? readFileSync(opt.script, "utf8") : opt.script;
  steps = parseJSON("--script", text);
  if (!Array.isArray(steps) || steps.some(s => !s || typeof s.op !== "string")) usage("--script must be a JSON array of {\"op\": ...} objects");
} else {
  steps = [{ op: "list" }];
  if (opt.call) steps.push({ op: "call", name: opt.call, args: opt.args ? parseJSON("--args", opt.args) : {} });
}

const wanted = new Set(opt.caps === "all" ? ["roots", "sampling", "elicitation"] : opt.caps === "none" ? [] : opt.caps.split(",").map(s => s.trim()).filter(Boolean));
for (const c of wanted) if (!["roots", "sampling", "elicitation", "tasks"].includes(c)) usage(`unknown capability ${c}`);
const capabilities = {};
if (wanted.has("roots")) capabilities.roots = { listChanged: true };
if (wanted.has("sampling")) capabilities.sampling = {};
if (wanted.has("elicitation")) capabilities.elicitation = { form: {}, url: {} };
if (wanted.has("tasks")) capabilities.tasks = { list: {}, cancel: {} }; // MCP 2025-11-25 tasks (experimental in the SDK)

const sdkVersion = (() => {
  try { return JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8")).version; } catch { return "unknown"; }
})();
const out = {
  client: { name: opt.clientName, sdk: sdkVersion, capabilities },
  transport: null,
  initialize: null,
  steps: [],
  timings: {},
  notifications: {},
  serverRequests: [],
  clientErrors: [],
};

const client = new Client({ name: opt.clientName, version: "0.1.0" }, { capabilities });
client.onerror = (e) => out.clientErrors.push(String(e?.message ?? e));
if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, async (req) => {
  out.serverRequests.push({ method: req.method, params: req.params ?? {} });
  const roots = (opt.roots.length ? opt.roots : ["file:///tmp"]).map(uri => ({ uri, name: uri.split("/").filter(Boolean).pop() ?? uri }));
  return { roots };
});
if (capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  out.serverRequests.push({ method: req.method, params: req.params });
  const last = req.params.messages.at(-1);
  const text = opt.sampleText ?? `sampled: ${JSON.stringify(last?.content?.text ?? "")}`;
  return { model: "mcp-toolsearch-fake-llm", role: "assistant", stopReason: "endTurn", content: { type: "text", text } };
});
if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, async (req) => {
  out.serverRequests.push({ method: req.method, params: req.params });
  if (opt.elicit !== "accept") return { action: opt.elicit };
  if (req.params.mode === "url") return { action: "accept" };
  if (opt.elicitContent) return { action: "accept", content: parseJSON("--elicit-content", opt.elicitContent) };
  const content = {};
  for (const [k, s] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    if (s.enum) content[k] = s.enum[0];
    else if (s.oneOf) content[k] = s.oneOf[0]?.const;
    else if (s.type === "boolean") content[k] = true;
    else if (s.type === "number" || s.type === "integer") content[k] = s.minimum ?? 1;
    else if (s.type === "array") content[k] = s.items?.enum ? [s.items.enum[0]] : (s.items?.anyOf ? [s.items.anyOf[0].const] : []);
    else if (s.format === "email") content[k] = "test@example.com";
    else if (s.format === "uri") content[k] = "https://example.com";
    else if (s.format === "date") content[k] = "2026-01-01";
    else if (s.format === "date-time") content[k] = "2026-01-01T00:00:00Z";
    else content[k] = s.default ?? "test";
  }
  return { action: "accept", content };
});

let inner;
if (opt.http) {
  out.transport = { type: "streamable-http", url: opt.http };
  inner = new StreamableHTTPClientTransport(new URL(opt.http), { requestInit: { headers: opt.headers } });
} else if (opt.sse) {
  out.transport = { type: "sse", url: opt.sse };
  inner = new SSEClientTransport(new URL(opt.sse), {
    requestInit: { headers: opt.headers },
    eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers ?? {}), ...opt.headers } }) },
  });
} else {
  out.transport = { type: "stdio", command: cmd };
  inner = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), env: { ...getDefaultEnvironment(), ...process.env, ...opt.env }, stderr: opt.quiet ? "ignore" : "inherit" });
}

// A transparent wrapper that records the wire: raw responses by request id, the id of the last
// request we sent, and notifications by method. Steps run one at a time, so "the last request
// sent by us" is the step's request.
const rawResponses = new Map();
const wireProgress = []; // params of every notifications/progress, in arrival order
const waiters = [];
let lastRequestId = null;
let negotiatedVersion = null;
const transport = {
  start: () => inner.start(),
  close: () => inner.close(),
  send: (msg, o) => {
    if (msg && msg.method && msg.id !== undefined) lastRequestId = msg.id;
    return inner.send(msg, o);
  },
  get sessionId() { return inner.sessionId; },
  setProtocolVersion: (v) => { negotiatedVersion = v; inner.setProtocolVersion?.(v); },
};
inner.onmessage = (msg, extra) => {
  if (msg && msg.id !== undefined && !msg.method && ("result" in msg || "error" in msg)) rawResponses.set(msg.id, msg);
  if (msg && msg.method && msg.id === undefined) {
    out.notifications[msg.method] = (out.notifications[msg.method] ?? 0) + 1;
    if (msg.method === "notifications/progress") wireProgress.push(msg.params);
    for (const w of [...waiters]) w();
  }
  transport.onmessage?.(msg, extra);
};
inner.onclose = () => transport.onclose?.();
inner.onerror = (e) => transport.onerror?.(e);

const errObj = (e) => ({ code: e?.code ?? null, message: String(e?.message ?? e), ...(e?.data !== undefined ? { data: e.data } : {}) });

// run performs one SDK request and reports the raw wire outcome.
async function run(fn) {
  lastRequestId = null;
  let sdkErr = null;
  try { await fn(); } catch (e) { sdkErr = e; }
  const raw = lastRequestId !== null ? rawResponses.get(lastRequestId) : undefined;
  if (raw && "error" in raw) return { error: raw.error };
  if (raw && "result" in raw) return sdkErr ? { result: raw.result, sdkError: errObj(sdkErr) } : { result: raw.result };
  return { error: errObj(sdkErr ?? new Error("no response")) };
}

const reqOpts = { timeout: opt.timeout };
let lastTaskId = null;
async function step(s) {
  const o = { timeout: s.timeoutMs ?? opt.timeout };
  switch (s.op) {
    case "list": {
      if (s.cursor !== undefined) return run(() => client.listTools({ cursor: s.cursor }, o));
      const tools = [];
      let cursor, pages = 0, bytes = 0;
      do {
        const r = await run(() => client.listTools(cursor ? { cursor } : {}, o));
        if (r.error) return pages ? { ...r, pagesBeforeError: pages } : r;
        pages++;
        bytes += Buffer.byteLength(JSON.stringify(r.result));
        tools.push(...(r.result.tools ?? []));
        cursor = r.result.nextCursor;
      } while (cursor);
      return { result: { tools }, pages, bytes };
    }
    case "call": {
      // The SDK uses the request id as progressToken; progress is taken from the wire (the SDK's
      // onprogress callback can miss the last notification, which races the response).
      const callOpts = s.progress ? { ...o, onprogress: () => {}, resetTimeoutOnProgress: true } : o;
      const r = await run(() => client.callTool({ name: s.name, arguments: s.args ?? {} }, undefined, callOpts));
      if (!s.progress) return r;
      const id = lastRequestId;
      return { ...r, progress: wireProgress.filter(p => p.progressToken === id) };
    }
    case "listResources": return run(() => client.listResources(s.cursor ? { cursor: s.cursor } : {}, o));
    case "listResourceTemplates": return run(() => client.listResourceTemplates(s.cursor ? { cursor: s.cursor } : {}, o));
    case "readResource": return run(() => client.readResource({ uri: s.uri }, o));
    case "subscribe": return run(() => client.subscribeResource({ uri: s.uri }, o));
    case "unsubscribe": return run(() => client.unsubscribeResource({ uri: s.uri }, o));
    case "listPrompts": return run(() => client.listPrompts(s.cursor ? { cursor: s.cursor } : {}, o));
    case "getPrompt": return run(() => client.getPrompt({ name: s.name, arguments: s.args ?? {} }, o));
    case "complete": return run(() => client.complete({ ref: s.ref, argument: s.argument }, o));
    case "setLevel": return run(() => client.setLoggingLevel(s.level, o));
    case "ping": return run(() => client.ping(o));
    case "request": return run(() => client.request({ method: s.method, params: s.params ?? {} }, ResultSchema, o));
    case "notify": {
      try { await client.notification({ method: s.method, params: s.params ?? {} }); return { result: {} }; } catch (e) { return { error: errObj(e) }; }
    }
    // Tasks (MCP 2025-11-25, the SDK's experimental client): callTask calls a tool as a task and
    // follows it to its result (messages: taskCreated, taskStatus..., result | error); the other
    // ops name a task by taskId, default the last one created.
    case "callTask": {
      const messages = [];
      let final = null;
      try {
        for await (const m of client.experimental.tasks.callToolStream({ name: s.name, arguments: s.args ?? {} }, undefined, { ...o, task: s.task ?? { ttl: 60000 } })) {
          if (m.type === "taskCreated") lastTaskId = m.task.taskId;
          messages.push({ type: m.type, ...(m.task ? { taskId: m.task.taskId, status: m.task.status } : {}) });
          if (m.type === "result") final = { result: m.result };
          if (m.type === "error") final = { error: errObj(m.error) };
        }
      } catch (e) { final = { error: errObj(e) }; }
      return { ...(final ?? { error: { code: -3, message: "the stream ended without a result" } }), messages, taskId: lastTaskId };
    }
    case "getTask": return run(() => client.experimental.tasks.getTask(s.taskId ?? lastTaskId, o));
    case "taskResult": return run(() => client.experimental.tasks.getTaskResult(s.taskId ?? lastTaskId, undefined, o));
    case "listTasks": return run(() => client.experimental.tasks.listTasks(s.cursor, o));
    case "cancelTask": return run(() => client.experimental.tasks.cancelTask(s.taskId ?? lastTaskId, o));
    case "sleep": await new Promise(r => setTimeout(r, s.ms ?? 100)); return { result: {} };
    case "wait": {
      const want = s.count ?? 1, limit = s.timeoutMs ?? opt.timeout;
      const have = () => (out.notifications[s.notification] ?? 0) >= want;
      if (have()) return { result: { count: out.notifications[s.notification] } };
      return await new Promise((resolve) => {
        const timer = setTimeout(() => { waiters.splice(waiters.indexOf(check), 1); resolve({ error: { code: -1, message: `timed out after ${limit} ms waiting for ${want} ${s.notification} (have ${out.notifications[s.notification] ?? 0})` } }); }, limit);
        const check = () => { if (have()) { clearTimeout(timer); waiters.splice(waiters.indexOf(check), 1); resolve({ result: { count: out.notifications[s.notification] } }); } };
        waiters.push(check);
      });
    }
    default: return { error: { code: -2, message: `unknown op ${JSON.stringify(s.op)}` } };
  }
}

let exitCode = 0;
const t0 = performance.now();
const ms = () => Math.round(performance.now() - t0);
try {
  lastRequestId = null;
  await client.connect(transport, reqOpts);
  const init = rawResponses.get(0)?.result ?? null; // initialize is the client's first request (id 0)
  out.initialize = {
    protocolVersion: init?.protocolVersion ?? negotiatedVersion,
    serverInfo: init?.serverInfo ?? client.getServerVersion(),
    capabilities: init?.capabilities ?? client.getServerCapabilities(),
    instructions: init?.instructions ?? client.getInstructions() ?? null,
  };
  if (inner.sessionId) out.initialize.sessionId = inner.sessionId;
  out.timings.connectMs = ms();
  for (const s of steps) out.steps.push({ ...s, ...(await step(s)) });
  out.timings.stepsMs = ms() - out.timings.connectMs;
} catch (e) {
  out.error = errObj(e);
  exitCode = 1;
} finally {
  const tc = ms();
  try { await client.close(); } catch {}
  out.timings.closeMs = ms() - tc;
}
// Exit only once stdout is flushed: process.exit right after write truncates a large
// document (e.g. 1,000 tools) when stdout is a pipe.
process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(exitCode));
