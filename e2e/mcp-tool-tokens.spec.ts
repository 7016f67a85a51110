import { test, expect } from '@playwright/test';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import { baseURL } from './helpers';

// What the tool definitions cost an agent: every client puts the whole
// tools/list into the model's context. A tool is counted as the JSON of its
// tools/list entry: JSON.stringify of the entry as parsed from the server's
// answer (compact, keys in the order the server sent them; the same bytes as
// on the wire), encoded with cl100k_base (ranks bundled with js-tiktoken, no
// download). The total is the sum over the tools.
const ceilings: Record<string, number> = {
  claim_connected_profile: 224,
  set_status: 176,
  read_session_state: 135,
  read_session_mail: 165,
  post_session_note: 194,
  reply_to_sender: 170,
};
const totalCeiling = 1300;

test('tools/list stays within its token budget', async () => {
  const res = await fetch(`${baseURL}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(res.status).toBe(200);
  const { result } = await res.json();
  const enc = new Tiktoken(cl100k_base);

  const counts: [string, number][] = result.tools.map((t: any) => [t.name, enc.encode(JSON.stringify(t)).length]);
  const total = counts.reduce((sum, [, n]) => sum + n, 0);
  const report = [...counts.map(([name, n]) => `${name.padEnd(24)} ${String(n).padStart(5)}${name in ceilings ? `  (≤ ${ceilings[name]})` : ''}`),
    `${'total'.padEnd(24)} ${String(total).padStart(5)}  (≤ ${totalCeiling})`].join('\n');
  console.log(`cl100k_base tokens per tools/list entry:\n${report}`);
  test.info().annotations.push({ type: 'tokens', description: report });

  for (const [name, n] of counts) {
    if (name in ceilings) expect(n, `${name}: ${n} tokens`).toBeLessThanOrEqual(ceilings[name]);
  }
  expect(total, `total: ${total} tokens`).toBeLessThanOrEqual(totalCeiling);
});
