// How long Claude Code waits for one ask_owner call that waits wait_seconds
// for an answer: `claude -p` with its model behind a scripted Messages API
// on loopback, which asks for ask_owner (after the tool search Claude Code
// defers MCP tools behind, when it does) and records when the tool result
// comes back and what it says. The osFoundry server is reached straight over
// HTTP (a bearer token) or through the stdio bridge `osfoundry agent mcp`.
//
// Environment: CLAUDE (the claude binary), MODE (http | stdio), URL (the
// server's origin), TOKEN (http), BRIDGE and CHECKOUT (stdio: the osfoundry
// binary, run in the logged-in checkout with this process's environment),
// SESSION_TYPE, SESSION_ID, WAIT_SECONDS, KEY, and MCP_TOOL_TIMEOUT when
// measuring it. Prints one JSON line.
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = process.env;
const out = { mode: env.MODE, wait_seconds: Number(env.WAIT_SECONDS), mcp_tool_timeout: env.MCP_TOOL_TIMEOUT ?? null, requests: 0 };
let calledAt = 0;

function sse(res, blocks, stop) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', { message: { id: `msg_${Date.now()}`, type: 'message', role: 'assistant', model: 'claude-scripted', content: [],
    stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  send('message_stop', {});
  res.end();
}

function resultText(block) {
  const c = block.content;
  if (typeof c === 'string') return c;
  return (c ?? []).map((x) => x.text ?? '').join(' ');
}

const api = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    if (!req.url.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(req.url.includes('count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    out.requests++;
    const m = JSON.parse(body);
    const tools = (m.tools ?? []).map((t) => t.name);
    const blocks = (m.messages ?? []).flatMap((x) => (Array.isArray(x.content) ? x.content : []));
    const results = blocks.filter((b) => b.type === 'tool_result');
    const ask = tools.find((n) => n.endsWith('ask_owner'));
    const asked = blocks.find((b) => b.type === 'tool_use' && b.name.endsWith('ask_owner'));
    if (asked) {
      const r = results.find((b) => b.tool_use_id === asked.id);
      if (r && !out.ended_ms) {
        out.ended_ms = Date.now() - calledAt;
        out.result = resultText(r).slice(0, 400);
        out.is_error = !!r.is_error;
      }
      sse(res, [{ type: 'text', text: 'Done.' }], 'end_turn');
      return;
    }
    if (ask && tools.includes(ask)) {
      calledAt = Date.now();
      out.tool = ask;
      sse(res, [{ type: 'tool_use', id: 'toolu_ask', name: ask, input: { session_type: env.SESSION_TYPE, session_id: env.SESSION_ID,
        question: `How long does Claude Code wait? (${env.KEY})`, wait_seconds: Number(env.WAIT_SECONDS), idempotency_key: env.KEY } }], 'tool_use');
      return;
    }
    const search = tools.find((n) => /tool.?search/i.test(n));
    if (search && !blocks.some((b) => b.type === 'tool_use' && b.name === search)) {
      out.tool_search = search;
      sse(res, [{ type: 'tool_use', id: 'toolu_search', name: search, input: { query: 'select:mcp__osfoundry__ask_owner', max_results: 5 } }], 'tool_use');
      return;
    }
    out.unscripted = (out.unscripted ?? 0) + 1;
    out.tools_offered = tools.slice(0, 40);
    sse(res, [{ type: 'text', text: 'ok' }], 'end_turn');
  });
});
await new Promise((r) => api.listen(0, '127.0.0.1', r));
const apiURL = `http://127.0.0.1:${api.address().port}`;

const dir = mkdtempSync(join(tmpdir(), 'claude-wait-'));
const server = env.MODE === 'stdio'
  ? { type: 'stdio', command: env.BRIDGE, args: ['agent', 'mcp', '--server', env.URL] }
  : { type: 'http', url: `${env.URL}/mcp`, headers: { Authorization: `Bearer ${env.TOKEN}` } };
writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { osfoundry: server } }));
const started = Date.now();
const child = spawn(env.CLAUDE, ['-p', 'Ask the owner how long you may wait.', '--mcp-config', join(dir, 'mcp.json'), '--strict-mcp-config',
  '--allowedTools', 'mcp__osfoundry', '--output-format', 'json', '--max-turns', '6'], {
  cwd: env.MODE === 'stdio' ? env.CHECKOUT : dir,
  env: { ...process.env, ANTHROPIC_BASE_URL: apiURL, ANTHROPIC_API_KEY: 'sk-ant-scripted', CLAUDE_CONFIG_DIR: join(dir, 'config'),
    DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
let stderr = '';
child.stdout.on('data', (d) => { stdout += d; });
child.stderr.on('data', (d) => { stderr += d; });
const code = await new Promise((r) => child.on('close', r));
out.exit = code;
out.run_ms = Date.now() - started;
if (!out.ended_ms) {
  out.stdout = stdout.slice(-600);
  out.stderr = stderr.slice(-600);
}
console.log(JSON.stringify(out));
api.close();
process.exit(0);
