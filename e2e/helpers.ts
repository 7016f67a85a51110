// Shared steps of the end-to-end tests: the owner account, tokens minted with
// the osfoundry CLI against the running server's database, and MCP calls.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';
import { baseURL, dataDir, mailpitURL } from '../playwright.config';

export { baseURL, dataDir, mailpitURL };

export const owner = {
  email: 'owner@example.com',
  name: 'Olivia Owner',
  password: 'correct horse battery',
  workspace: 'Example Works',
};

/** The one-time setup code the server wrote to its data folder (fresh install only). */
export function setupCode(): string {
  return readFileSync(`${dataDir}/setup-code`, 'utf8').trim();
}

/** Signs the owner in, creating the first owner account on a fresh install. */
export async function signIn(page: Page): Promise<void> {
  await page.goto('/');
  if (page.url().includes('/setup')) {
    await page.getByLabel('Setup code').fill(setupCode());
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Your name').fill(owner.name);
    await page.getByLabel('Workspace name').fill(owner.workspace);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Create account' }).click();
  } else if (page.url().includes('/login')) {
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await expect(page.getByTestId('signed-in-as')).toHaveText(owner.name);
}

/**
 * Mints a bearer token for a new connection with the CLI (it attaches to the
 * server's running private PostgreSQL). Returns the token and connection id.
 */
export function mintToken(opts: { client?: string; scope?: string; projects?: string[] } = {}): { token: string; connectionId: number } {
  const args = ['token', 'create', '--data-dir', dataDir, '--base-url', baseURL, '--log-level', 'warn',
    '--email', owner.email, '--client', opts.client ?? 'E2E agent', '--scope', opts.scope ?? 'read,write'];
  for (const p of opts.projects ?? []) args.push('--project', p);
  const out = execFileSync('./bin/osfoundry', args, { encoding: 'utf8' });
  const token = out.match(/osf_at_[A-Za-z0-9_-]+/)?.[0];
  const id = out.match(/Connection (\d+)/)?.[1];
  if (!token || !id) throw new Error(`no token in CLI output: ${out}`);
  return { token, connectionId: Number(id) };
}

let rpcId = 0;

/** Calls an MCP tool over plain JSON-RPC and returns the tool result. */
export async function callTool(token: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const res = await fetch(`${baseURL}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  const json = text.startsWith('{') ? JSON.parse(text)
    : JSON.parse(text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join(''));
  if (json.error) throw new Error(`${name}: ${JSON.stringify(json.error)}`);
  return json.result;
}

/** Parses the JSON a tool returned (structuredContent, or its text content). */
export function toolJSON(result: any): any {
  if (result.structuredContent) return result.structuredContent;
  return JSON.parse(result.content?.[0]?.text ?? 'null');
}

/** Runs axe-core on the page and fails on serious or critical violations. */
export async function expectAccessible(page: Page): Promise<void> {
  // Evaluated through the devtools protocol, which the page's CSP does not block.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const violations = await page.evaluate(async () => {
    // @ts-ignore axe is injected above
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  });
  expect(violations, violations.join('\n')).toEqual([]);
}

/** Runs SQL on the test server's private PostgreSQL (psql on its socket). */
export function sql(query: string): string {
  const dirs = ['/usr/lib/postgresql'].flatMap((d) => {
    try { return readdirSync(d).map((v) => `${d}/${v}/bin/psql`); } catch { return []; }
  });
  const psql = process.env.PSQL || dirs.find((p) => existsSync(p)) || 'psql';
  return execFileSync(psql, ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', query,
    `host=${dataDir}/pg port=5432 user=osfoundry dbname=osfoundry sslmode=disable`], { encoding: 'utf8' }).trim();
}

/** Ends the server's note hub connection: the server closes every live stream. */
export function killNoteHub(): void {
  sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'osfoundry-note-hub'`);
}
