// A scripted model API on loopback: the "model" behind a real agent CLI. It
// speaks the wire format the CLI uses (OpenAI Responses for Codex, OpenAI
// Chat Completions for Copilot CLI and opencode, the Gemini API for Gemini
// CLI) and answers each turn of the agent loop with the next step of a
// script: a call of one osFoundry tool, or a final text. The script sees
// what the CLI handed to the model: the tools each request offered and the
// tool result of each call, as the model reads it.
//
// Requests that are not the agent loop (a title for the conversation, Gemini
// CLI's routing and next-speaker questions with a JSON schema) get a short
// answer of their own and do not move the script.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The osFoundry tools, by the names the server lists. */
export const osfoundryTools = [
  'claim_connected_profile', 'set_status', 'list_agents', 'list_sessions', 'read_session_state',
  'read_session_mail', 'post_session_note', 'poll_resource_events', 'reply_to_sender', 'ask_owner',
];

export type Wire = 'responses' | 'chat' | 'gemini';

/** A tool as the CLI offered it to the model. */
export interface OfferedTool {
  /** The function name the model must call. */
  name: string;
  /** The Responses API namespace it sits in (Codex puts MCP tools in one), if any. */
  namespace?: string;
}

/** One request of the agent loop, read into what the model was given. */
export interface Turn {
  /** Every tool offered, the CLI's own among them. */
  tools: OfferedTool[];
  /** The osFoundry tools offered, by their server names, mapped to what the CLI calls them. */
  osfoundry: Map<string, OfferedTool>;
  /** The tool results in the conversation so far, as text the model reads. */
  results: string[];
  /** The user's prompt (the first user message). */
  prompt: string;
}

/** What a script answers a turn with. */
type Action = { call: string; args: Record<string, unknown> } | { text: string };

/** Thrown into a script when the CLI asked no more (it ended, or gave up). */
export class ConversationEnded extends Error {}

/**
 * The script's side of one conversation: `call` answers the pending turn
 * with a tool call and resolves with the result the CLI handed back.
 */
export interface Conversation {
  /** The first turn: what the model was offered before any call. */
  readonly first: Turn;
  /** The latest turn. */
  readonly turn: Turn;
  /** Calls an osFoundry tool; resolves with the tool result as the model reads it. */
  call(tool: string, args: Record<string, unknown>): Promise<string>;
}

export type Script<T> = (c: Conversation) => Promise<T>;

interface Pending {
  turn: Turn;
  answer(a: Action): void;
}

/** A loopback model API that plays one script per conversation. */
export class ScriptedModel {
  private server: Server;
  private waiting: ((p: Pending) => void) | null = null;
  private queued: Pending[] = [];
  /** The last action and how many results the conversation had when it was sent, to answer a retry the same. */
  private last: { action: Action; results: number } | null = null;

  private constructor(readonly wire: Wire) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  /** Starts a model API for a wire format on a free loopback port. */
  static async start(wire: Wire): Promise<ScriptedModel> {
    const m = new ScriptedModel(wire);
    await new Promise<void>((resolve) => m.server.listen(0, '127.0.0.1', resolve));
    return m;
  }

  /** The base URL: `http://127.0.0.1:PORT`. */
  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Plays `script` against the next conversation while `cli` runs (the CLI
   * process, started by the caller). The script's return value, a string,
   * is the model's final text; `cli` ending first fails the script's next
   * step with ConversationEnded. Resolves with the script's value and the
   * CLI's result.
   */
  async play<T extends { text: string }, R>(script: Script<T>, cli: Promise<R>): Promise<{ value: T; cli: R }> {
    this.queued = [];
    this.last = null;
    this.failed = null;
    let firstTurn!: (t: Turn) => void;
    this.first = new Promise((resolve) => { firstTurn = resolve; });
    let ended = false;
    let endedWith: unknown;
    const cliDone = cli.then(
      (r) => {
        ended = true;
        const tail = (r as { tail?: string })?.tail;
        this.fail(new ConversationEnded(`the CLI ended before the script did${tail ? `: ${tail}` : ''}`));
        return r;
      },
      (err) => { ended = true; endedWith = err; this.fail(err); throw err; });
    cliDone.catch(() => {});
    let pending = await this.next();
    firstTurn(pending.turn);
    const conv: Conversation = {
      first: pending.turn,
      get turn() { return pending.turn; },
      call: async (tool, args) => {
        const offered = pending.turn.osfoundry.get(tool);
        if (!offered) throw new Error(`the model was not offered ${tool} (offered: ${pending.turn.tools.map(toolLabel).join(', ')})`);
        const before = pending.turn.results.length;
        this.last = { action: { call: tool, args }, results: before };
        pending.answer({ call: tool, args });
        pending = await this.next();
        if (pending.turn.results.length <= before) throw new Error(`after ${tool} the CLI sent no tool result`);
        return pending.turn.results[pending.turn.results.length - 1];
      },
    };
    let value: T;
    try {
      value = await script(conv);
    } catch (err) {
      if (!ended) pending.answer({ text: `The script stopped: ${err instanceof Error ? err.message : err}` });
      if (endedWith !== undefined && err instanceof ConversationEnded) throw endedWith;
      throw err;
    }
    this.last = { action: { text: value.text }, results: pending.turn.results.length };
    pending.answer({ text: value.text });
    return { value, cli: await cliDone };
  }

  private failed: unknown = null;
  private first: Promise<Turn> = new Promise(() => {});

  /** The first agent-loop request of the conversation being played. */
  firstTurn(): Promise<Turn> {
    return this.first;
  }

  private fail(err: unknown): void {
    this.failed = err;
    const w = this.waiting;
    this.waiting = null;
    w?.(null as unknown as Pending);
  }

  private async next(): Promise<Pending> {
    const q = this.queued.shift();
    if (q) return q;
    if (this.failed) {
      const err = this.failed;
      this.failed = null;
      throw err;
    }
    const p = await new Promise<Pending>((resolve) => { this.waiting = resolve; });
    if (!p) {
      const err = this.failed;
      this.failed = null;
      throw err;
    }
    return p;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method === 'GET') return json(res, { object: 'list', data: [{ id: 'scripted-model', object: 'model', owned_by: 'osfoundry-e2e' }] });
      let j: any = {};
      try { j = JSON.parse(body); } catch { /* answered as a side request */ }
      const url = req.url ?? '';
      if (this.wire === 'gemini' && url.includes(':countTokens')) return json(res, { totalTokens: 1 });
      const side = sideAnswer(this.wire, j);
      if (side !== null) return this.send(res, j, url, { text: side });
      const turn = readTurn(this.wire, j);
      // A retry of the turn already answered gets the same answer.
      if (this.last && turn.results.length === this.last.results) return this.send(res, j, url, this.last.action, turn);
      const p: Pending = { turn, answer: (a) => this.send(res, j, url, a, turn) };
      const w = this.waiting;
      if (w) {
        this.waiting = null;
        w(p);
      } else this.queued.push(p);
    });
  }

  private send(res: ServerResponse, j: any, url: string, a: Action, turn?: Turn): void {
    if (res.writableEnded) return;
    if ('call' in a) {
      const offered = turn?.osfoundry.get(a.call);
      write(this.wire, res, j, url, { call: offered ?? { name: a.call }, args: a.args });
    } else write(this.wire, res, j, url, { text: a.text });
  }
}

export function toolLabel(t: OfferedTool): string {
  return t.namespace ? `${t.namespace}/${t.name}` : t.name;
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Text of a content value: a string, or an array of text parts. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map((p: any) => (typeof p === 'string' ? p : p?.text ?? JSON.stringify(p))).join('\n');
  return v === undefined ? '' : JSON.stringify(v);
}

/** Maps the CLI's tool names to the server's: a name that names osfoundry and ends with a server tool name. */
function osfoundryOf(tools: OfferedTool[]): Map<string, OfferedTool> {
  const out = new Map<string, OfferedTool>();
  for (const t of tools) {
    const full = toolLabel(t);
    if (!/osfoundry/.test(full)) continue;
    const name = osfoundryTools.find((n) => t.name === n || new RegExp(`osfoundry[^a-z0-9]+${n}$`).test(t.name));
    if (name) out.set(name, t);
  }
  return out;
}

/** The answer to a request outside the agent loop, or null for a turn of the loop. */
function sideAnswer(wire: Wire, j: any): string | null {
  if (wire === 'gemini') {
    const schema = j.generationConfig?.responseJsonSchema ?? j.generationConfig?.responseSchema;
    if (schema) return JSON.stringify(fill(schema));
    return (j.tools ?? []).some((t: any) => t.functionDeclarations?.length) ? null : 'Scripted.';
  }
  return (j.tools ?? []).length ? null : 'Scripted.';
}

/** A value that fits a JSON schema: the routing and next-speaker questions of Gemini CLI ("user" speaks next). */
function fill(s: any): unknown {
  if (s.enum) return s.enum.includes('user') ? 'user' : s.enum[0];
  switch (String(s.type ?? '').toLowerCase()) {
    case 'object': return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, fill(v)]));
    case 'integer': case 'number': return 10;
    case 'boolean': return false;
    case 'array': return [];
    default: return 'scripted';
  }
}

function readTurn(wire: Wire, j: any): Turn {
  const tools: OfferedTool[] = [];
  const results: string[] = [];
  let prompt = '';
  if (wire === 'responses') {
    for (const t of j.tools ?? []) {
      if (t.type === 'namespace') for (const f of t.tools ?? []) tools.push({ name: f.name, namespace: t.name });
      else if (t.name) tools.push({ name: t.name });
    }
    for (const item of j.input ?? []) {
      if (item.type === 'function_call_output') results.push(textOf(item.output));
    }
    prompt = textOf((j.input ?? []).filter((i: any) => i.role === 'user').at(-1)?.content?.map((c: any) => c.text));
  } else if (wire === 'chat') {
    for (const t of j.tools ?? []) if (t.function?.name) tools.push({ name: t.function.name });
    for (const m of j.messages ?? []) if (m.role === 'tool') results.push(textOf(m.content));
    prompt = textOf((j.messages ?? []).find((m: any) => m.role === 'user')?.content);
  } else {
    for (const t of j.tools ?? []) for (const f of t.functionDeclarations ?? []) tools.push({ name: f.name });
    for (const c of j.contents ?? []) {
      for (const p of c.parts ?? []) if (p.functionResponse) results.push(JSON.stringify(p.functionResponse.response));
    }
    prompt = textOf((j.contents ?? []).filter((c: any) => c.role === 'user').at(-1)?.parts?.map((p: any) => p.text ?? ''));
  }
  return { tools, osfoundry: osfoundryOf(tools), results, prompt };
}

let ids = 0;

/** Writes one model answer in the wire format, streamed when the request asked for a stream. */
function write(wire: Wire, res: ServerResponse, j: any, url: string, a: { call: OfferedTool; args: Record<string, unknown> } | { text: string }): void {
  const n = ++ids;
  if (wire === 'responses') {
    const item = 'call' in a
      ? { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: a.call.name, ...(a.call.namespace ? { namespace: a.call.namespace } : {}), arguments: JSON.stringify(a.args) }
      : { type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: a.text, annotations: [] }] };
    const usage = { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const ev of [
      { type: 'response.created', response: { id: `resp_${n}` } },
      { type: 'response.output_item.done', output_index: 0, item },
      { type: 'response.completed', response: { id: `resp_${n}`, usage } },
    ]) res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
    res.end();
    return;
  }
  if (wire === 'chat') {
    const call = 'call' in a ? { id: `call_${n}`, type: 'function', function: { name: a.call.name, arguments: JSON.stringify(a.args) } } : null;
    const finish = call ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    const base = { id: `chatcmpl_${n}`, created: Math.floor(Date.now() / 1000), model: j.model };
    if (j.stream) {
      const delta = call ? { role: 'assistant', content: null, tool_calls: [{ index: 0, ...call }] } : { role: 'assistant', content: (a as { text: string }).text };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`);
      res.write('data: [DONE]\n\n');
      res.end();
      return;
    }
    const message = call ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: (a as { text: string }).text };
    json(res, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage });
    return;
  }
  const parts = 'call' in a ? [{ functionCall: { name: a.call.name, args: a.args } }] : [{ text: a.text }];
  const chunk = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
  };
  if (url.includes('alt=sse')) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    return;
  }
  json(res, chunk);
}
