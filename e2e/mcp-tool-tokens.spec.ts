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
// Each ceiling is the tool's count when last shortened, so none grows back
// unnoticed. SPEC §15 asks for at most 230 a tool (ask_owner, seven bounded
// fields, is the largest) and 1,550 in all, which the ceilings add up to:
// docs/mcp.md.
const ceilings: Record<string, number> = {
  ask_owner: 226,
  claim_connected_profile: 154,
  list_agents: 96,
  list_sessions: 97,
  poll_resource_events: 164,
  post_session_note: 174,
  read_session_mail: 164,
  read_session_state: 121,
  reply_to_sender: 203,
  set_status: 151,
};
// The sum of the ceilings.
const totalCeiling = Object.values(ceilings).reduce((sum, n) => sum + n, 0);

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
  const report = [...counts.map(([name, n]) => `${name.padEnd(24)} ${String(n).padStart(5)}  (≤ ${ceilings[name]})`),
    `${'total'.padEnd(24)} ${String(total).padStart(5)}  (≤ ${totalCeiling})`].join('\n');
  console.log(`cl100k_base tokens per tools/list entry:\n${report}`);
  test.info().annotations.push({ type: 'tokens', description: report });

  expect(counts.map(([name]) => name).sort(), 'a ceiling for every tool').toEqual(Object.keys(ceilings).sort());
  for (const [name, n] of counts) expect(n, `${name}: ${n} tokens`).toBeLessThanOrEqual(ceilings[name]);
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
