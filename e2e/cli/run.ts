// Running an agent CLI as a person or a script runs it: one process per
// command, in a home of its own (ClientHome), with every URL it prints or
// asks the browser to open collected so a test can sign the owner in.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ClientHome, onCleanup } from '../client-matrix';
import { baseURL } from '../helpers';

/** How one command ended. */
export interface CliResult {
  code: number | null;
  signal: string | null;
  /** stdout and stderr, interleaved as they came, colours removed. */
  out: string;
  /** The last lines of out, for a failure message. */
  tail: string;
}

/** A command that is running. */
export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves when it ends, whatever its exit code (never rejects). */
  done: Promise<CliResult>;
  /** What it printed so far. */
  output(): string;
  /** Authorization URLs of this server it printed or opened that were not returned before. */
  newAuthorizationURLs(): string[];
  /** Resolves when its output matches (or rejects when it ends first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  kill(): void;
}

const ansi = /\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07]*\x07/g;

/** The folders of a CLI's world inside its ClientHome: HOME, XDG config/data/cache/state and a working folder. */
export function cliEnv(home: ClientHome, extra: Record<string, string> = {}): Record<string, string> {
  const dirs = { XDG_CONFIG_HOME: 'config', XDG_DATA_HOME: 'data', XDG_CACHE_HOME: 'cache', XDG_STATE_HOME: 'state' };
  const env: Record<string, string> = {};
  for (const [k, d] of Object.entries(dirs)) {
    env[k] = join(home.dir, d);
    mkdirSync(env[k], { recursive: true });
  }
  return home.env({ ...env, NO_COLOR: '1', TERM: 'dumb', CI: 'true', ...extra });
}

/** The working folder the CLI runs in (a folder of its home, so nothing of the repository is read). */
export function workDir(home: ClientHome): string {
  const dir = join(home.dir, 'work');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Starts a command. `answers` replies on stdin when the output shows a
 * prompt (e.g. Gemini CLI's "[Y/n]"); stdin is closed otherwise only when
 * `closeStdin` is set (some CLIs read a piped stdin as part of the prompt).
 */
export function startCli(home: ClientHome, cmd: string, args: string[], opts: {
  env?: Record<string, string>;
  timeoutMs?: number;
  answers?: [RegExp, string][];
  closeStdin?: boolean;
} = {}): CliProcess {
  const child = spawn(cmd, args, { cwd: workDir(home), env: cliEnv(home, opts.env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // The whole process group: some CLIs are a launcher and a child.
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
  };
  onCleanup(kill);
  let out = '';
  const answered = new Set<number>();
  const listeners: (() => void)[] = [];
  const seen = new Set<string>();
  const onData = (d: Buffer) => {
    out += d.toString('utf8').replace(ansi, '');
    (opts.answers ?? []).forEach(([re, answer], i) => {
      if (!answered.has(i) && re.test(out)) {
        answered.add(i);
        child.stdin.write(answer);
      }
    });
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.stdin.on('error', () => {});
  if (opts.closeStdin) child.stdin.end();
  const timer = setTimeout(kill, opts.timeoutMs ?? 60_000);
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      for (const l of listeners) l();
      resolve({ code, signal, out, tail: out.trim().split('\n').slice(-12).join('\n') });
    });
  });
  return {
    child,
    done,
    output: () => out,
    newAuthorizationURLs: () => {
      const found = [...home.newlyOpened(), ...(out.match(new RegExp(`${escapeRe(baseURL)}/authorize\\?[^\\s"'<>]+`, 'g')) ?? [])];
      const fresh = found.filter((u) => !seen.has(u));
      for (const u of fresh) seen.add(u);
      return [...new Set(fresh)];
    },
    waitFor: (pattern, timeoutMs = 30_000) => new Promise((resolve, reject) => {
      const check = () => {
        const m = out.match(pattern);
        if (m) return finish(() => resolve(m));
        if (child.exitCode !== null || child.signalCode !== null) {
          finish(() => reject(new Error(`ended (${child.exitCode ?? child.signalCode}) before printing ${pattern}: ${out.trim().split('\n').slice(-8).join(' / ')}`)));
        }
      };
      const t = setTimeout(() => finish(() => reject(new Error(`no ${pattern} within ${timeoutMs / 1000} s: ${out.trim().split('\n').slice(-8).join(' / ')}`))), timeoutMs);
      const finish = (f: () => void) => {
        clearTimeout(t);
        const i = listeners.indexOf(check);
        if (i >= 0) listeners.splice(i, 1);
        f();
      };
      listeners.push(check);
      check();
    }),
    kill,
  };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A command that must succeed: resolves with its output, rejects with its tail. */
export async function runOK(home: ClientHome, cmd: string, args: string[], opts: Parameters<typeof startCli>[3] = {}): Promise<string> {
  const r = await startCli(home, cmd, args, { closeStdin: true, ...opts }).done;
  if (r.code !== 0) throw new Error(`${[cmd.split('/').pop(), ...args.slice(0, 3)].join(' ')} exited ${r.code ?? r.signal}: ${r.tail}`);
  return r.out;
}
