// Client matrix: the MCP Inspector's CLI (`npx @modelcontextprotocol/inspector
// --cli URL --method …`), one process per call as a person or a script runs
// it. Two rows:
//  - a static header (`--header "Authorization: Bearer …"`) with a token
//    minted by `osfoundry token create`;
//  - OAuth: MCP_AUTO_OPEN_ENABLED=true lets it sign in without a terminal; the
//    URL it opens is caught by a fake xdg-open and approved headlessly, and the
//    redirect is delivered to its callback listener (--callback-url on a free
//    port, not the fixed default 127.0.0.1:6276). Tokens persist between
//    calls in its storage folder: with no OS keychain (a container, CI) it
//    would keep secrets in memory and sign in again on every call, so
//    MCP_INSPECTOR_SECRET_STORE=file keeps them in secrets.json there.
// HOME and MCP_STORAGE_DIR are a temp folder removed afterwards.
import { test } from '@playwright/test';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { baseURL, mintToken, signIn } from './helpers';
import { CookieBrowser } from './oauth-client';
import { ClientHome, afterClientTest, approveWhile, freePort, installed, onCleanup, runMatrix, type MatrixClient } from './client-matrix';

test.afterEach(afterClientTest);
// One Node process per call (about a second each on an idle machine, several
// on a busy one), a dozen calls per row.
test.describe.configure({ timeout: 150_000 });

const launcher = join(__dirname, '..', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

/** Runs one Inspector CLI command; resolves with its `result`, rejects with its exact failure. */
function inspector(home: ClientHome, args: string[], env: Record<string, string> = {}): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, '--cli', `${baseURL}/mcp`, '--format', 'json', ...args], {
      env: home.env({ MCP_STORAGE_DIR: join(home.dir, 'storage'), MCP_INSPECTOR_SECRET_STORE: 'file', NO_COLOR: '1', ...env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    onCleanup(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    // Answers "Proceed with step-up authorization? [y/N]" should it be asked.
    child.stdin.end('y\n');
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        try {
          return resolve(JSON.parse(out).result);
        } catch {
          return reject(new Error(`unreadable output: ${out}\n${err}`));
        }
      }
      const envelope = err.split('\n').reverse().find((l) => l.startsWith('{"error"'));
      reject(new Error(`exit ${code ?? signal}: ${envelope ?? err.trim()}`));
    });
  });
}

test('client matrix: MCP Inspector CLI with a static Authorization header', async ({ page }) => {
  await signIn(page); // the install has its owner
  const browser = new CookieBrowser();
  await browser.signIn();
  const connectionName = 'Matrix Inspector static token';
  const { token } = mintToken({ client: connectionName });
  const home = new ClientHome();
  const header = ['--header', `Authorization: Bearer ${token}`];
  const c: MatrixClient = {
    label: `${installed('@modelcontextprotocol/inspector')} --header`,
    connectionName,
    listTools: async () => (await inspector(home, ['--method', 'tools/list', ...header])).tools.map((t: any) => t.name),
    callTool: (name, args) => inspector(home, ['--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args), ...header]),
    scopesAsked: () => [],
  };
  await runMatrix(c, browser, 'matrix-inspector-static', { staticToken: true });
});

test('client matrix: MCP Inspector CLI with OAuth', async ({ page }) => {
  await signIn(page); // the install has its owner
  const browser = new CookieBrowser();
  const home = new ClientHome();
  const callback = ['--callback-url', `http://127.0.0.1:${await freePort()}/oauth/callback`];
  const env = { MCP_AUTO_OPEN_ENABLED: 'true' };
  const scopesAsked: string[] = [];
  const run = (args: string[]) => approveWhile(inspector(home, [...args, ...callback], env), () => home.newlyOpened(), browser, (u) => scopesAsked.push(u.searchParams.get('scope') ?? ''));
  const c: MatrixClient = {
    label: installed('@modelcontextprotocol/inspector'),
    connectionName: 'MCP Inspector', // the client_name it registers
    listTools: async () => (await run(['--method', 'tools/list'])).tools.map((t: any) => t.name),
    callTool: (name, args) => run(['--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args)]),
    scopesAsked: () => scopesAsked,
  };
  await runMatrix(c, browser, 'matrix-inspector-oauth');
});
