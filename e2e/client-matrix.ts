// The client matrix: one sequence of steps that every real MCP client goes
// through against the running server, and a one-line summary per client.
//
//   list        anonymous initialize + tools/list
//   sign-in     the first tool call is a read tool (list_sessions); it sends the
//               owner to the consent page (headless), and the call then answers
//   step-up     the first write tool after that read-first sign-in works
//   every tool  every tool the server lists, the writes in a session the
//               connection is invited to through the web app, a reply to the
//               owner's note there, a question to its owners
//   revoke      the owner revokes the connection on the Connections page; the
//               client's next call starts a new authorization that succeeds
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@playwright/test';
import { toolJSON } from './helpers';
import type { CookieBrowser } from './oauth-client';
import { KnownGap } from './cli/gaps';

/** What a test needs from one client to run the matrix. */
export interface MatrixClient {
  /** Client and version, as printed in the summary. */
  label: string;
  /** The client name the connection carries (what the Connections page lists). */
  connectionName: string;
  /** Anonymous tools/list: the tool names. */
  listTools(): Promise<string[]>;
  /**
   * Calls a tool the way the client's host would, finishing any
   * authorization the client starts on the way. Resolves with the MCP
   * CallToolResult; rejects with the client's own error.
   */
  callTool(name: string, args: Record<string, unknown>): Promise<any>;
  /** The scope parameter of each authorization the client started, in order. */
  scopesAsked(): string[];
}

export type Step = 'list' | 'sign-in' | 'step-up' | 'every tool' | 'revoke';
const defaultSteps: Step[] = ['list', 'sign-in', 'step-up', 'every tool', 'revoke'];

/**
 * Records each step's outcome and prints one line:
 * `matrix | mcp-remote 0.15.1 | list ✓ (8 tools, anonymous) | sign-in ✓ (…) | …`,
 * and under it how long each step took. The steps are the client matrix's
 * unless given (the agent CLIs have their own).
 */
export class MatrixLine<S extends string = Step> {
  private cells = new Map<S, string>();
  /** How long each step took, for the line that follows the summary. */
  private times: string[] = [];
  private running: S | null = null;
  private printed = false;
  private readonly started = Date.now();

  constructor(readonly label: string, private readonly steps: readonly S[] = defaultSteps as unknown as S[]) {
    unprinted.add(this);
  }

  /**
   * Runs a step; a failure is recorded with its exact message, printed, and
   * rethrown. A step whose outcome a known server gap explains returns a
   * KnownGap: it shows as ✗ with the gap named, and the test goes on.
   */
  async step(step: S, fn: () => Promise<string | KnownGap | void>): Promise<void> {
    const start = Date.now();
    this.running = step;
    try {
      const note = await fn();
      this.cells.set(step, note instanceof KnownGap ? `✗ known gap "${note.gap.id}" (${note.note.slice(0, 600)})` : `✓${note ? ` (${note})` : ''}`);
      this.times.push(`${step} ${((Date.now() - start) / 1000).toFixed(1)} s`);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.cells.set(step, `✗ ${msg.split('\n')[0].slice(0, 300)}`);
      this.print();
      throw err;
    }
  }

  /** Marks a step the client cannot take at all, with the reason shown. */
  notApplicable(step: S, why: string): void {
    this.cells.set(step, `n/a (${why})`);
  }

  /** Records that the test stopped while a step was running. */
  stopped(): void {
    if (this.printed) return;
    if (this.running && !this.cells.has(this.running)) this.cells.set(this.running, '✗ did not finish before the test timed out');
    this.print();
  }

  line(): string {
    return ['matrix', this.label, ...this.steps.map((s) => `${s} ${this.cells.get(s) ?? '– (not reached)'}`)].join(' | ');
  }

  print(): void {
    this.printed = true;
    unprinted.delete(this);
    console.log(`${this.line()}\n  took: ${this.times.join(', ')}; ${((Date.now() - this.started) / 1000).toFixed(1)} s in all`);
  }
}

const unprinted = new Set<MatrixLine<string>>();

const cleanups: (() => unknown)[] = [];

/** Registers what afterClientTest undoes (child processes, temp folders), last first. */
export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}

/**
 * Runs after every client test (test.afterEach), also when the test timed
 * out: prints the line of a client stopped mid-step, naming the step, then
 * stops the client's processes and removes its temp folders.
 */
export async function afterClientTest(): Promise<void> {
  for (const line of unprinted) line.stopped();
  while (cleanups.length) {
    try {
      await cleanups.pop()!();
    } catch (err) {
      console.log(`cleanup: ${err}`);
    }
  }
}

/** The tools the matrix calls, in order; a listed tool missing here fails "every tool". */
export const exercised = [
  'list_sessions', 'claim_connected_profile', 'set_status', 'list_agents',
  'read_session_state', 'post_session_note', 'read_session_mail', 'reply_to_sender', 'poll_resource_events', 'ask_owner',
];

/** Fails unless a tool call answered without isError; returns its JSON. */
export function ok(name: string, result: any): any {
  if (!result || result.isError) throw new Error(`${name} answered ${JSON.stringify(result?.content ?? result)}`);
  return toolJSON(result);
}

/**
 * Runs every step for one client. `handle` must be unique on the server.
 * The owner's CookieBrowser must be the one the client's authorizations go
 * through (it signs the owner in on the first one).
 *
 * A client holding a static bearer token (`staticToken`) cannot sign in, step
 * up or re-authorize: those cells say so, and after revocation its next call
 * must be refused (the cell shows the client's exact refusal).
 */
export async function runMatrix(c: MatrixClient, browser: CookieBrowser, handle: string, opts: { staticToken?: boolean } = {}): Promise<MatrixLine> {
  const line = new MatrixLine(c.label);
  let listed: string[] = [];
  await line.step('list', async () => {
    listed = await c.listTools();
    for (const t of exercised) if (!listed.includes(t)) throw new Error(`tools/list lacks ${t}: ${listed.join(', ')}`);
    if (c.scopesAsked().length !== 0) throw new Error('tools/list started an authorization');
    return `${listed.length} tools${opts.staticToken ? '' : ', anonymous'}`;
  });

  const firstRead = async () => {
    const sessions = ok('list_sessions', await c.callTool('list_sessions', {}));
    if (!Array.isArray(sessions.sessions)) throw new Error(`list_sessions answered ${JSON.stringify(sessions)}`);
  };
  const firstWrite = () => c.callTool('claim_connected_profile', { handle, display_name: c.label }).then((r) => ok('claim_connected_profile', r));
  if (opts.staticToken) {
    line.notApplicable('sign-in', 'static bearer token');
    line.notApplicable('step-up', 'static bearer token');
  } else {
    await line.step('sign-in', async () => {
      await firstRead();
      const asked = c.scopesAsked();
      if (asked.length !== 1) throw new Error(`expected one authorization, got ${asked.length}`);
      return `first call list_sessions, asked "${asked[0]}"`;
    });
    await line.step('step-up', async () => {
      const before = c.scopesAsked().length;
      await firstWrite();
      const again = c.scopesAsked().slice(before);
      return again.length ? `${again.length} more authorization, asked ${again.map((s) => `"${s}"`).join(', ')}` : 'no new sign-in';
    });
  }

  await line.step('every tool', async () => {
    const before = c.scopesAsked().length;
    const notCovered = listed.filter((t) => !exercised.includes(t));
    if (notCovered.length) throw new Error(`the matrix does not call ${notCovered.join(', ')}`);
    if (opts.staticToken) {
      await firstRead();
      await firstWrite();
    }
    const status = ok('set_status', await c.callTool('set_status', { repo: 'osfoundry', branch: 'client-matrix', task: c.label }));
    if (status.task !== c.label) throw new Error(`set_status answered ${JSON.stringify(status)}`);
    const agents = ok('list_agents', await c.callTool('list_agents', {}));
    if (!JSON.stringify(agents).includes(handle)) throw new Error(`list_agents lacks ${handle}: ${JSON.stringify(agents)}`);

    const session = await browser.inviteToNewSession(c.connectionName);
    if (!session) throw new Error('this build has no project pages to invite the connection');
    const sessions = ok('list_sessions', await c.callTool('list_sessions', {}));
    if (!JSON.stringify(sessions).includes(session.session_id)) throw new Error(`list_sessions lacks the invitation: ${JSON.stringify(sessions)}`);
    ok('read_session_state', await c.callTool('read_session_state', session));
    const note = ok('post_session_note', await c.callTool('post_session_note', {
      ...session, subject: 'Started', body: `Posted by ${c.label}.`, idempotency_key: `matrix-${handle}`,
    }));
    if (note.duplicate !== false || !note.id) throw new Error(`post_session_note answered ${JSON.stringify(note)}`);
    const mail = ok('read_session_mail', await c.callTool('read_session_mail', { ...session, limit: 5 }));
    if (!JSON.stringify(mail).includes(`Posted by ${c.label}.`)) throw new Error(`read_session_mail lacks the note: ${JSON.stringify(mail)}`);
    const welcome = mail.notes?.find((n: any) => n.from_kind === 'owner');
    if (!welcome) throw new Error(`read_session_mail lacks the owner's note: ${JSON.stringify(mail)}`);
    const reply = ok('reply_to_sender', await c.callTool('reply_to_sender', {
      ...session, to: welcome.from, subject: 'Re: Welcome', body: 'Started.', idempotency_key: `matrix-reply-${handle}`,
    }));
    if (reply.duplicate !== false || !reply.id) throw new Error(`reply_to_sender answered ${JSON.stringify(reply)}`);
    const events = ok('poll_resource_events', await c.callTool('poll_resource_events', {
      resource_type: session.session_type, resource_id: session.session_id, after_sequence: 0,
    }));
    if (!events.events?.length) throw new Error(`poll_resource_events answered ${JSON.stringify(events)}`);
    const asked = ok('ask_owner', await c.callTool('ask_owner', {
      ...session, question: `Which client is this (${c.label})?`, options: ['This one', 'Another'], idempotency_key: `matrix-ask-${handle}`,
    }));
    if (asked.status !== 'open' || !asked.question_id) throw new Error(`ask_owner answered ${JSON.stringify(asked)}`);
    const again = c.scopesAsked().length - before;
    if (again && !opts.staticToken) throw new Error(`the client signed in again ${again} times on the way (its tokens were not kept)`);
    return `${exercised.length}/${listed.length}`;
  });

  await line.step('revoke', async () => {
    const before = c.scopesAsked().length;
    await browser.revokeConnection(c.connectionName);
    if (opts.staticToken) {
      const refusal = await c.callTool('list_sessions', {}).then(
        (r) => (r?.isError ? JSON.stringify(r.content) : null),
        (err) => (err instanceof Error ? err.message : String(err)));
      if (refusal === null) throw new Error('the revoked token was still accepted');
      return `refused, a new token is needed: ${refusal.split('\n')[0].slice(0, 220)}`;
    }
    ok('list_sessions', await c.callTool('list_sessions', {}));
    const again = c.scopesAsked().slice(before);
    if (again.length !== 1) throw new Error(`expected one new authorization after revocation, got ${again.length}`);
    return `new authorization, asked "${again[0]}", call answered`;
  });

  line.print();
  return line;
}

/** The version of an installed npm package (read from node_modules, whatever its exports allow). */
export function installed(pkg: string): string {
  return `${pkg} ${JSON.parse(readFileSync(join(__dirname, '..', 'node_modules', pkg, 'package.json'), 'utf8')).version}`;
}

/** A loopback port free right now (for a client's OAuth callback listener). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as any).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A temp folder that is a client's whole world: HOME, its config folders,
 * and a fake browser. `xdg-open` (first on PATH) and $BROWSER record every
 * URL the client asks to open in `opened.txt` and open nothing.
 */
export class ClientHome {
  readonly dir = mkdtempSync(join(tmpdir(), 'osfoundry-client-'));
  private readonly openedFile = join(this.dir, 'opened.txt');
  private seen = 0;

  constructor() {
    onCleanup(() => this.remove());
    const bin = join(this.dir, 'bin');
    mkdirSync(bin);
    mkdirSync(join(this.dir, 'home'));
    const opener = `#!/bin/sh\nprintf '%s\\n' "$1" >> '${this.openedFile}'\n`;
    for (const name of ['xdg-open', 'browser']) {
      writeFileSync(join(bin, name), opener);
      chmodSync(join(bin, name), 0o755);
    }
  }

  /** The environment for the client's process: nothing of the real HOME or desktop. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v === undefined || /^(DISPLAY|WAYLAND_DISPLAY|DBUS_SESSION_BUS_ADDRESS|XDG_|DESKTOP_SESSION|KDE_|GNOME_|BROWSER$|FORCE_COLOR$)/.test(k)) continue;
      env[k] = v;
    }
    return {
      ...env,
      HOME: join(this.dir, 'home'),
      PATH: `${join(this.dir, 'bin')}:${process.env.PATH}`,
      BROWSER: join(this.dir, 'bin', 'browser'),
      ...extra,
    };
  }

  /** URLs the client asked the browser to open since the last call. */
  newlyOpened(): string[] {
    if (!existsSync(this.openedFile)) return [];
    const all = readFileSync(this.openedFile, 'utf8').split('\n').filter(Boolean);
    const fresh = all.slice(this.seen);
    this.seen = all.length;
    return fresh;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Plays the owner for a client that waits on its own loopback callback: while
 * `pending` runs, every authorization URL the client opens is approved with
 * the CookieBrowser and the redirect delivered to the client's listener.
 * Each approved URL goes to onApproved; resolves or rejects as pending does.
 */
export async function approveWhile<T>(pending: Promise<T>, opened: () => string[], browser: CookieBrowser, onApproved: (url: URL) => void): Promise<T> {
  let done = false;
  const settled = pending.finally(() => { done = true; });
  settled.catch(() => {});
  const deadline = Date.now() + 45_000;
  while (!done && Date.now() < deadline) {
    for (const url of opened()) {
      const authorization = new URL(url);
      const back = await browser.approve(authorization);
      const res = await fetch(back, { redirect: 'manual' });
      await res.arrayBuffer();
      expect(res.status, `the client's callback ${back.origin}${back.pathname} answered ${res.status}`).toBeLessThan(400);
      onApproved(authorization);
    }
    await Promise.race([settled.catch(() => {}), new Promise((r) => setTimeout(r, 50))]);
  }
  return settled;
}
