// The agent-CLI matrix: a real coding-agent CLI, its model played by a
// ScriptedModel on loopback, against the e2e server. One sequence of steps
// for every CLI, one summary line per CLI:
//
//   sign-in        OAuth finished headlessly (the owner signs in and approves
//                  the consent page), or a static token in the CLI's config
//   tools          the model request carries the nine osFoundry tools
//   every tool     one run in which the model calls each tool once, in a
//                  session the connection was invited to through the web app
//   team mail      the agent's note shows in Team mail as "outside assistant"
//   unread hint    the owner replies; the next tool result the CLI hands to
//                  the model says so ("unread note"), as a text block or only
//                  in structured content
//   revoke         the owner revokes the connection on Connections; what the
//                  CLI does on its next start
//   sign in again  how the person gets it back, and a call that answers
import { expect } from '@playwright/test';
import { MatrixLine } from '../client-matrix';
import type { CookieBrowser } from '../oauth-client';
import { dependsOn, KnownGap, revokedTokenAnswered, unreadHintTextOnly } from './gaps';
import { ConversationEnded, osfoundryTools, toolLabel, type Conversation, type ScriptedModel } from './model-api';
import type { CliResult } from './run';

export const cliSteps = ['sign-in', 'tools', 'every tool', 'team mail', 'unread hint', 'revoke', 'sign in again'] as const;
export type CliStep = (typeof cliSteps)[number];

/** What the matrix needs of one agent CLI. */
export interface AgentCli {
  /** Package and version, e.g. "@openai/codex 0.169.0". */
  label: string;
  /** The loopback model API the CLI is configured to use. */
  model: ScriptedModel;
  /**
   * What the CLI hands the model of a tool result: its text blocks (with or
   * without the structured content), or only the structured content.
   */
  resultShape: 'text blocks' | 'structured content only';
  /** Signs in (or configures a token); returns the cell's note. */
  signIn(): Promise<string | KnownGap>;
  /** The client name the connection carries on Connections. */
  connectionName: string;
  /** Starts the CLI's headless run with a prompt; resolves when it ends. */
  run(prompt: string): Promise<CliResult>;
  /** What the person does after revocation (returns the cell's note: the command). */
  signInAgain(): Promise<string>;
  /**
   * The CLI offers the model the tools it listed in an earlier run even when
   * its connect is refused (Copilot CLI keeps them): after revocation the
   * call must be refused, but tools may still be offered.
   */
  keepsListedTools?: boolean;
}

/** A tool result as the model read it, with the JSON it carries. */
export interface Seen {
  text: string;
  json: any;
}

/**
 * The JSON objects in what the model read: the CLI may wrap a tool's JSON
 * in its own text ("Output:\n{…}"), its own JSON (`{"output":"{…}"}`), or
 * join several blocks. Objects inside JSON strings are found too.
 */
export function jsonObjects(text: string): any[] {
  const out: any[] = [];
  const visit = (v: any) => {
    if (typeof v === 'string') {
      if (v.includes('{')) for (const o of scan(v)) visit(o);
      return;
    }
    if (v && typeof v === 'object') {
      out.push(v);
      for (const x of Object.values(v)) visit(x);
    }
  };
  for (const o of scan(text)) visit(o);
  return out;
}

/** Top-level JSON objects in a text, by brace matching outside strings. */
function scan(text: string): any[] {
  const found: any[] = [];
  for (let i = text.indexOf('{'); i >= 0 && i < text.length; i = text.indexOf('{', i + 1)) {
    let depth = 0;
    let inStr = false;
    for (let k = i; k < text.length; k++) {
      const ch = text[k];
      if (inStr) {
        if (ch === '\\') k++;
        else if (ch === '"') inStr = false;
      } else if (ch === '"') inStr = true;
      else if (ch === '{') depth++;
      else if (ch === '}' && --depth === 0) {
        try {
          found.push(JSON.parse(text.slice(i, k + 1)));
          i = k;
        } catch { /* not JSON from here: try the next brace */ }
        break;
      }
    }
  }
  return found;
}

/** The first object with `key` in what the model read; fails naming what it read. */
function withKey(name: string, text: string, key: string): any {
  const o = jsonObjects(text).find((x) => x && typeof x === 'object' && key in x);
  if (!o) throw new Error(`the model read no "${key}" in ${name}'s result: ${text.slice(0, 400)}`);
  return o;
}

const hintLine = /\d+ unread notes? for you: .*?Read (?:it|them) with read_session_mail\./;

/** Where an unread hint sits in what the model read: a text line of its own, only inside JSON, or nowhere. */
export function hintShape(text: string): 'text block' | 'structured content only' | 'none' {
  const outsideJSON = text.replace(/"hint"\s*:\s*"(?:[^"\\]|\\.)*"/g, '');
  if (hintLine.test(outsideJSON)) return 'text block';
  if (jsonObjects(text).some((o) => o?.unread && typeof o.unread === 'object')) return 'structured content only';
  return 'none';
}

/**
 * Runs every step for one CLI and prints its line. `handle` must be unique
 * on the server. The owner's CookieBrowser must be signed in.
 */
export async function runCliMatrix(cli: AgentCli, browser: CookieBrowser, handle: string): Promise<MatrixLine<CliStep>> {
  const line = new MatrixLine<CliStep>(cli.label, cliSteps);
  await line.step('sign-in', async () => {
    const note = await cli.signIn();
    const listed = `listed on Connections as "${await browser.connectionClient(cli.connectionName)}"`;
    return note instanceof KnownGap ? new KnownGap(note.gap, `${note.note}; ${listed}`) : `${note}; ${listed}`;
  });

  const session = await browser.inviteToNewSession(cli.connectionName);
  if (!session) throw new Error('this build has no project pages to invite the connection');
  const seen = new Map<string, string>();
  const play = (c: Conversation) => everyTool(c, browser, session, handle, cli.label, seen);
  const run: Promise<unknown> = cli.model.play(play, cli.run(
    `Report to osFoundry: claim the profile ${handle}, say what you work on, and post to session ${session.session_id}.`));
  run.catch(() => {});
  await line.step('tools', async () => {
    const first = await firstOffered(cli.model, run);
    const missing = osfoundryTools.filter((t) => !first.some((n) => n.endsWith(t)));
    if (missing.length) throw new Error(`the model request lacks ${missing.join(', ')} (offered: ${first.join(', ')})`);
    return `${first.length}/${osfoundryTools.length}, as ${first.join(', ')}`;
  });
  await line.step('every tool', async () => {
    await run;
    const missed = osfoundryTools.filter((t) => !seen.has(t));
    if (missed.length) throw new Error(`the model never got a result of ${missed.join(', ')}`);
    return `${osfoundryTools.length}/${osfoundryTools.length} through the model`;
  });
  await line.step('team mail', async () => {
    const html = await browser.teamMail(session.session_id);
    const row = html.split('<li').find((r) => r.includes(`Posted by ${cli.label} through its model.`));
    if (!row) throw new Error('the note is not in Team mail');
    if (!/data-testid="note-outside"[^>]*>\s*outside assistant\s*</.test(row)) throw new Error('the note lacks the "outside assistant" label');
    return 'labelled "outside assistant"';
  });
  await line.step('unread hint', async () => {
    const before = seen.get('post_session_note')!;
    if (hintShape(before) !== 'none') throw new Error(`unread mail was hinted before the owner replied: ${before.slice(0, 300)}`);
    const after = seen.get('poll_resource_events')!;
    const shape = hintShape(after);
    if (shape === 'none') throw new Error(`the result after the owner's reply says nothing unread: ${after.slice(0, 300)}`);
    expect(shape, `what ${cli.label} hands the model of a tool result`).toBe(cli.resultShape === 'text blocks' ? 'text block' : 'structured content only');
    const reads = () => {
      const m = after.match(hintLine);
      if (!m) throw new Error(`the model read no "unread note": ${shape}, ${JSON.stringify(jsonObjects(after).find((o) => o?.unread)?.unread)}`);
      return `${shape}: "${m[0]}"`;
    };
    return shape === 'text block' ? reads() : dependsOn(unreadHintTextOnly, reads);
  });

  await line.step('revoke', async () => {
    await browser.revokeConnection(cli.connectionName);
    const afterRevoke = await oneCall(cli, 'list_sessions');
    if (afterRevoke.offered.length && afterRevoke.answer.includes('"sessions"')) throw new Error(`the revoked connection still answered: ${afterRevoke.answer.slice(0, 300)}`);
    const shows = afterRevoke.answer.replace(/\s+/g, ' ').slice(0, 240);
    return dependsOn(revokedTokenAnswered, () => {
      if (afterRevoke.offered.length && !cli.keepsListedTools) throw new Error(`the CLI still offered the tools; the call was refused with: ${shows}`);
      if (afterRevoke.offered.length) return `the CLI offered the tools it had listed before; the call was refused with: ${shows}`;
      return `the CLI offered no osFoundry tools: ${shows}`;
    });
  });
  await line.step('sign in again', async () => {
    const how = await cli.signInAgain();
    const again = await oneCall(cli, 'list_sessions');
    withKey('list_sessions', again.answer, 'sessions');
    return `${how}; list_sessions answered`;
  });
  line.print();
  return line;
}

/** The osFoundry tools of the first agent-loop request, as the CLI named them. */
async function firstOffered(model: ScriptedModel, run: Promise<unknown>): Promise<string[]> {
  const turn = await Promise.race([model.firstTurn(), run.then(() => { throw new Error('the run ended before the model was asked'); })]);
  return [...turn.osfoundry.values()].map(toolLabel);
}

/** A run that calls one tool (when the model is offered it) and ends. */
async function oneCall(cli: AgentCli, tool: string): Promise<{ offered: string[]; answer: string }> {
  try {
    const { value } = await cli.model.play(async (c) => {
      const offered = [...c.first.osfoundry.values()].map(toolLabel);
      if (!c.first.osfoundry.has(tool)) return { text: 'Nothing to call.', offered, answer: `no osFoundry tools offered (offered: ${c.first.tools.map(toolLabel).join(', ') || 'none'})` };
      return { text: 'Done.', offered, answer: await c.call(tool, {}) };
    }, cli.run(`Call ${tool}.`));
    return value;
  } catch (err) {
    if (!(err instanceof ConversationEnded)) throw err;
    return { offered: [], answer: `the CLI ended without asking the model: ${err.message}` };
  }
}

/** The model's side of the main run: each osFoundry tool once, the owner replying in between. */
async function everyTool(c: Conversation, browser: CookieBrowser, session: { session_type: string; session_id: string }, handle: string, label: string, seen: Map<string, string>) {
  const call = async (tool: string, args: Record<string, unknown>, key: string) => {
    const text = await c.call(tool, args);
    seen.set(tool, text);
    return withKey(tool, text, key);
  };
  await call('claim_connected_profile', { handle, display_name: label }, 'sender_slug');
  const status = await call('set_status', { repo: 'osfoundry', branch: 'cli-matrix', task: label }, 'task');
  if (status.task !== label) throw new Error(`set_status answered ${JSON.stringify(status)}`);
  const agents = await call('list_agents', {}, 'agents');
  if (!JSON.stringify(agents).includes(handle)) throw new Error(`list_agents lacks ${handle}`);
  const sessions = await call('list_sessions', {}, 'sessions');
  if (!JSON.stringify(sessions).includes(session.session_id)) throw new Error(`list_sessions lacks the invitation: ${JSON.stringify(sessions)}`);
  await call('read_session_state', session, 'last_sequence');
  const mail = await call('read_session_mail', { ...session, limit: 5 }, 'notes');
  const welcome = mail.notes.find((n: any) => n.from_kind === 'owner');
  if (!welcome) throw new Error(`read_session_mail lacks the owner's note: ${JSON.stringify(mail)}`);
  const note = await call('post_session_note', {
    ...session, subject: 'Started', body: `Posted by ${label} through its model.`, idempotency_key: `cli-${handle}`,
  }, 'duplicate');
  if (note.duplicate !== false || !note.id) throw new Error(`post_session_note answered ${JSON.stringify(note)}`);
  await browser.replyToNote(session.session_id, note.id, 'Go ahead.');
  await call('poll_resource_events', { resource_type: session.session_type, resource_id: session.session_id, after_sequence: 0 }, 'events');
  const reply = await call('reply_to_sender', {
    ...session, to: welcome.from, subject: 'Re: Welcome', body: 'Started.', idempotency_key: `cli-reply-${handle}`,
  }, 'duplicate');
  if (reply.duplicate !== false) throw new Error(`reply_to_sender answered ${JSON.stringify(reply)}`);
  const asked = await call('ask_owner', {
    ...session, question: 'Ship the change today?', options: ['Ship', 'Wait'], idempotency_key: `cli-ask-${handle}`,
  }, 'question_id');
  if (asked.status !== 'open') throw new Error(`ask_owner answered ${JSON.stringify(asked)}`);
  return { text: 'Reported to osFoundry.' };
}
