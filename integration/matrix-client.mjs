// matrix-client.mjs: one round trip of the protocol matrix (issue 17) with an official
// TypeScript SDK client, against the proxy over Streamable HTTP. It lists the tools, calls one,
// calls one that asks the user a question (elicitation: a request on 2025-era connections, an
// input_required result on 2026-07-28 ones), calls one that changes the upstream's tool list and
// waits for notifications/tools/list_changed. Prints one JSON document:
//   {sdk, version, tools: [names], call: text, elicit: text, changed: n, error?}
//
//   node matrix-client.mjs --sdk v1|v2 --mode direct|tools|code --prefix P --answer TEXT URL
//   node matrix-client.mjs --sdk v1|v2 ... --stdio PROXY-BINARY CONFIG   (the proxy as a stdio child:
//                                                                     PROXY serve --config CONFIG)
//
// --sdk v1: @modelcontextprotocol/sdk 1.32.2 (protocol up to 2025-11-25);
// --sdk v2: @modelcontextprotocol/client 2.4.0 with version negotiation "auto" (2026-07-28 via
//           server/discover, 2025-11-25 otherwise).
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const sdk = opt('--sdk', 'v2'), mode = opt('--mode', 'direct'), prefix = opt('--prefix', 'u'), answer = opt('--answer', 'yes');
const url = args[args.length - 1];
const stdio = args.indexOf('--stdio') >= 0 ? { command: opt('--stdio'), args: ['serve', '--config', args[args.indexOf('--stdio') + 2], '--log-level', 'warn'], stderr: 'inherit' } : null;
const out = { sdk, mode };

// How each mode reaches an upstream tool.
function callOf(tool, toolArgs) {
  const id = `mcp:${prefix}:${tool}`;
  switch (mode) {
    case 'direct': return { name: `${prefix}__${tool}`, arguments: toolArgs };
    case 'tools': return { name: 'tool_call', arguments: { id, args: toolArgs } };
    case 'code': return { name: 'tool_search_code', arguments: { code: `const r = await openclaw.tools.call(${JSON.stringify(id)}, ${JSON.stringify(toolArgs)}); return r.result.content[0].text;` } };
  }
  throw new Error(`unknown mode ${mode}`);
}
const text = (r) => (r.content || []).map((c) => c.text ?? '').join('');

let changed = 0;
let client;
try {
  if (sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ElicitRequestSchema, ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    client = new Client({ name: 'matrix-ts-v1', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer } }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => { changed++; });
    if (stdio) {
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const t = new StdioClientTransport(stdio);
      t.setProtocolVersion = (v) => { t.protocolVersion = v; }; // the SDK reports the initialize result's version here
      await client.connect(t);
      out.version = t.protocolVersion;
    } else {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      out.version = client.transport.protocolVersion ?? '2025-11-25';
    }
  } else {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    client = new Client({ name: 'matrix-ts-v2', version: '1' }, {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: 'auto' },
      listChanged: { tools: { onChanged: () => { changed++; } } },
    });
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { answer } }));
    if (stdio) {
      const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
      await client.connect(new StdioClientTransport(stdio));
    } else {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    }
    out.version = client.getNegotiatedProtocolVersion();
  }
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.call = text(await client.callTool(callOf('list_issues', { owner: 'o', repo: 'r' })));
  out.elicit = text(await client.callTool(callOf('confirm', {})));
  const before = changed;
  await client.callTool(callOf('toggle', {}));
  for (let i = 0; i < 100 && changed === before; i++) await new Promise((r) => setTimeout(r, 50));
  out.changed = changed - before;
} catch (e) {
  out.error = String(e?.stack ?? e);
}
try { await client?.close(); } catch { /* closing is best effort */ }
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
