// Whether an owner's note reaches Claude Code in the middle of a turn:
// `claude -p` in a checkout where `osfoundry agent install claude-code`
// wrote the MCP entry (the stdio bridge, whose relay spools the notes) and
// the hooks, its model behind a scripted Messages API on loopback. The
// model runs two Bash commands and ends its turn. After the first tool
// result it asks the test (STEP_URL?step=1) to post an owner's note and
// wait until the bridge has spooled it; the request after the second tool
// must carry it (PostToolUse). Before it ends the turn it asks for a second
// note (step=2); the Stop hook must then keep the turn going once, with
// that note in "Stop hook feedback".
//
// Environment: CLAUDE (the claude binary), CHECKOUT (the installed,
// logged-in checkout; this process's environment is the machine's),
// STEP_URL, NOTE1 and NOTE2 (text each note carries). Prints one JSON line.
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = process.env;
const out = { requests: 0, steps: [], note1_after_tool2: false, note1_after_tool1: false, note2_in_stop_feedback: 0, stop_continued: false };

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

async function step(n) {
  const started = Date.now();
  const r = await fetch(`${env.STEP_URL}?step=${n}`);
  out.steps.push({ step: n, status: r.status, ms: Date.now() - started });
}

const bash = (id, command) => ({ type: 'tool_use', id, name: 'Bash', input: { command, description: command } });

const api = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', async () => {
    if (!req.url.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(req.url.includes('count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const m = JSON.parse(body);
    // Only the main conversation's requests (the prompt's); Claude Code may
    // send side requests (titles, summaries) without tools.
    if (!(m.tools ?? []).some((t) => t.name === 'Bash')) {
      sse(res, [{ type: 'text', text: 'ok' }], 'end_turn');
      return;
    }
    out.requests++;
    const blocks = (m.messages ?? []).flatMap((x) => (Array.isArray(x.content) ? x.content : [{ type: 'text', text: x.content }]));
    const results = new Set(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    const said = (text) => body.includes(text);
    if (!results.has('toolu_1')) {
      sse(res, [bash('toolu_1', 'echo one')], 'tool_use');
      return;
    }
    if (!results.has('toolu_2')) {
      out.note1_after_tool1 = said(env.NOTE1);
      await step(1); // the owner's note, posted after the first tool call
      sse(res, [bash('toolu_2', 'echo two')], 'tool_use');
      return;
    }
    if (!out.asked2) {
      out.asked2 = true;
      out.note1_after_tool2 = said(env.NOTE1);
      await step(2); // a note that comes as the turn is about to end
      sse(res, [{ type: 'text', text: 'All done.' }], 'end_turn');
      return;
    }
    // The Stop hook kept the turn going.
    out.stop_continued = true;
    out.note2_in_stop_feedback += said(env.NOTE2) && said('Stop hook') ? 1 : 0;
    sse(res, [{ type: 'text', text: 'Noted the owner.' }], 'end_turn');
  });
});
await new Promise((r) => api.listen(0, '127.0.0.1', r));
const apiURL = `http://127.0.0.1:${api.address().port}`;

const dir = mkdtempSync(join(tmpdir(), 'claude-relay-'));
const started = Date.now();
const child = spawn(env.CLAUDE, ['-p', 'Run the two steps.', '--mcp-config', join(env.CHECKOUT, '.mcp.json'), '--strict-mcp-config',
  '--allowedTools', 'Bash,mcp__osfoundry', '--output-format', 'json', '--max-turns', '8'], {
  cwd: env.CHECKOUT,
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
out.stdout = stdout.slice(-800);
out.stderr = stderr.slice(-800);
console.log(JSON.stringify(out));
api.close();
process.exit(0);
