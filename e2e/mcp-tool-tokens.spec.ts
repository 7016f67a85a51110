import { test, expect } from '@playwright/test';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import { readFileSync } from 'node:fs';
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
  // Its schema, annotations, securitySchemes and their _meta mirror alone
  // cost 182 tokens (post_session_note's five fields plus "to" and the
  // optional "in_reply_to"), so 183 would leave one token for the description.
  reply_to_sender: 224,
  // Seven fields (session_type, session_id, question, options as an array of
  // bounded strings, urgency as an enum with its default, wait_seconds with
  // its bounds, idempotency_key) and its annotations.
  ask_owner: 260,
};
// The eight tools' 1300, plus reply_to_sender's and ask_owner's ceilings.
const totalCeiling = 1300 + 224 + 260;

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

// What the unread hint costs: every tool result while mail waits carries it
// twice (docs/mcp.md), as a last text block (a line break and the sentence)
// and as the "unread" member of the structured content, which repeats the
// sentence for clients that give the model the structured content only.
// handlers/mcp/testdata/unread_hints.txt holds both of each shape as the
// server words them (TestHintLines keeps it true), with session ids as the
// store makes them. A typical line stays within 40 tokens, and a typical
// hint, both forms together, within 120.
const hintCeiling = 40;
const hintBothCeiling = 120;

test('the unread hint stays short', async () => {
  const lines = readFileSync('handlers/mcp/testdata/unread_hints.txt', 'utf8').trim().split('\n').map((l) => l.split('\t'));
  const enc = new Tiktoken(cl100k_base);
  const counts = lines.map(([label, line, member]) => {
    const block = enc.encode('\n' + line).length;
    return [label, line, enc.encode(line).length, block + enc.encode(member).length] as const;
  });
  const report = counts.map(([label, line, n, both]) => `${String(n).padStart(3)} ${String(both).padStart(4)}  ${label.padEnd(34)} ${line}`).join('\n');
  console.log(`cl100k_base tokens per unread hint (the line; the text block and the structured member together):\n${report}`);
  test.info().annotations.push({ type: 'tokens', description: report });
  for (const [label, , n, both] of counts) {
    if (!label.startsWith('typical')) continue;
    expect(n, `${label}: ${n} tokens`).toBeLessThanOrEqual(hintCeiling);
    expect(both, `${label}: ${both} tokens in both forms`).toBeLessThanOrEqual(hintBothCeiling);
  }
});
