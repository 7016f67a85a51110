// How long the TypeScript SDK (@modelcontextprotocol/sdk) waits for one
// ask_owner call that waits wait_seconds for an answer, against a running
// osFoundry: straight over HTTP with a bearer token, or through the stdio
// bridge `osfoundry agent mcp`. It prints one JSON line: how the call ended
// (a result, or the SDK's request timeout), after how long, and how many
// progress notifications arrived.
//
// Environment: MODE (http | stdio), URL (the server's origin), TOKEN (http),
// BRIDGE (the osfoundry binary, stdio; run with the login's environment
// in CHECKOUT, the logged-in checkout),
// SESSION_TYPE, SESSION_ID, WAIT_SECONDS, KEY (the idempotency key),
// TIMEOUT_MS (the request timeout; the SDK's default, 60 s, when unset) and
// RESET=1 (resetTimeoutOnProgress: a progress notification restarts it).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const env = process.env;
const transport = env.MODE === 'stdio'
  ? new StdioClientTransport({ command: env.BRIDGE, args: ['agent', 'mcp', '--server', env.URL], env: process.env, cwd: env.CHECKOUT, stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(`${env.URL}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${env.TOKEN}` } } });
const client = new Client({ name: 'osfoundry-tool-wait', version: '1.0.0' });
await client.connect(transport);

let progress = 0;
const options = { onprogress: () => { progress++; } };
if (env.TIMEOUT_MS) options.timeout = Number(env.TIMEOUT_MS);
if (env.RESET === '1') options.resetTimeoutOnProgress = true;
const start = Date.now();
const out = { mode: env.MODE, reset: env.RESET === '1', timeout_ms: options.timeout ?? 60000, wait_seconds: Number(env.WAIT_SECONDS) };
try {
  const r = await client.callTool({
    name: 'ask_owner',
    arguments: { session_type: env.SESSION_TYPE, session_id: env.SESSION_ID, question: `How long do you wait? (${env.KEY})`,
      wait_seconds: Number(env.WAIT_SECONDS), idempotency_key: env.KEY },
  }, undefined, options);
  out.ended = 'result';
  out.status = r.structuredContent?.status ?? null;
  if (r.isError || !out.status) out.text = (r.content ?? []).map((c) => c.text ?? '').join(' ');
} catch (e) {
  out.ended = 'error';
  out.error = String(e?.message ?? e);
  out.code = e?.code ?? null;
}
out.elapsed_ms = Date.now() - start;
out.progress = progress;
console.log(JSON.stringify(out));
await client.close().catch(() => {});
process.exit(0);
