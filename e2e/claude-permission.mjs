// One Bash call that Claude Code's settings do not allow, in `claude -p`
// with its model behind a scripted Messages API on loopback: the model asks
// to run COMMAND, the PermissionRequest hook the checkout has installed
// (`osfoundry agent install claude-code`) decides, and the script records
// what came back to the model as the tool's result.
//
// Environment: CLAUDE (the claude binary), CHECKOUT (the logged-in,
// installed checkout, run with this process's environment), COMMAND.
// Prints one JSON line: result, is_error, requests, exit, run_ms.
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = process.env;
const out = { command: env.COMMAND, requests: 0 };

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
    const blocks = (m.messages ?? []).flatMap((x) => (Array.isArray(x.content) ? x.content : []));
    const asked = blocks.find((b) => b.type === 'tool_use' && b.id === 'toolu_bash');
    if (asked) {
      const r = blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === asked.id);
      if (r && out.result === undefined) {
        out.result = resultText(r).slice(0, 1000);
        out.is_error = !!r.is_error;
      }
      sse(res, [{ type: 'text', text: 'Done.' }], 'end_turn');
      return;
    }
    if ((m.tools ?? []).some((t) => t.name === 'Bash')) {
      sse(res, [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: env.COMMAND, description: 'write a file' } }], 'tool_use');
      return;
    }
    sse(res, [{ type: 'text', text: 'ok' }], 'end_turn');
  });
});
await new Promise((r) => api.listen(0, '127.0.0.1', r));
const dir = mkdtempSync(join(tmpdir(), 'claude-permission-'));
const started = Date.now();
const child = spawn(env.CLAUDE, ['-p', 'Write the marker file.', '--output-format', 'json', '--max-turns', '4'], {
  cwd: env.CHECKOUT,
  env: { ...process.env, ANTHROPIC_BASE_URL: `http://127.0.0.1:${api.address().port}`, ANTHROPIC_API_KEY: 'sk-ant-scripted',
    CLAUDE_CONFIG_DIR: join(dir, 'config'), DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
let stderr = '';
child.stdout.on('data', (d) => { stdout += d; });
child.stderr.on('data', (d) => { stderr += d; });
out.exit = await new Promise((r) => child.on('close', r));
out.run_ms = Date.now() - started;
if (out.result === undefined) {
  out.stdout = stdout.slice(-800);
  out.stderr = stderr.slice(-800);
}
console.log(JSON.stringify(out));
api.close();
process.exit(0);
