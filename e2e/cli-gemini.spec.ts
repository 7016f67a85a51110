// Agent CLI: Gemini CLI (@google/gemini-cli), its model a scripted Gemini
// API on loopback: GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, with the API
// key chosen as its sign-in (security.auth.selectedType "gemini-api-key";
// the base URL alone selects a gateway sign-in that -p refuses). osFoundry is
// added with `gemini mcp add --scope user --transport http --trust …` and
// signed in to with `/mcp auth osfoundry` (run as `gemini -p`): it asks
// "[Y/n]", registers, opens the authorization URL and waits on a loopback
// callback; the URL is followed headlessly and the redirect delivered.
// Gemini CLI starts that sign-in only by name or on a 401 at connect, never
// on a 401 to a tool call. HOME (with ~/.gemini) is a temp folder removed at
// the end.
import { test } from '@playwright/test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClientHome, afterClientTest, approveWhile, installed, onCleanup } from './client-matrix';
import { baseURL } from './helpers';
import { CookieBrowser } from './oauth-client';
import { runCliMatrix, type AgentCli } from './cli/matrix';
import { ScriptedModel } from './cli/model-api';
import { runOK, startCli } from './cli/run';

test.afterEach(afterClientTest);
test.describe.configure({ timeout: 120_000 });

const gemini = join(__dirname, '..', 'node_modules', '.bin', 'gemini');

test('agent CLI: Gemini CLI with OAuth', async () => {
  const browser = new CookieBrowser();
  await browser.signInOrSetUp();
  const model = await ScriptedModel.start('gemini');
  onCleanup(() => model.close());
  const home = new ClientHome();
  const env = { GOOGLE_GEMINI_BASE_URL: model.origin, GEMINI_API_KEY: 'unused', GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  const settingsFile = join(home.dir, 'home', '.gemini', 'settings.json');

  // `/mcp auth osfoundry`, answering its [Y/n], following the URL it opens.
  const auth = async () => {
    const p = startCli(home, gemini, ['-p', '/mcp auth osfoundry'], { env, answers: [[/\[Y\/n\]/, 'Y\n']] });
    const done = p.done.then((r) => {
      if (!/Successfully authenticated/.test(r.out)) throw new Error(`/mcp auth osfoundry exited ${r.code ?? r.signal}: ${r.tail}`);
      return r;
    });
    const asked: string[] = [];
    const r = await approveWhile(done, () => p.newAuthorizationURLs(), browser, (u) => asked.push(`client_id ${u.searchParams.get('client_id')}, asked "${u.searchParams.get('scope')}"`));
    if (asked.length !== 1 || !asked[0].endsWith('asked "osfoundry:read osfoundry:write"')) throw new Error(`expected one authorization for both scopes: ${asked.join('; ')}`);
    return `\`/mcp auth osfoundry\` (${asked[0]}; exit ${r.code})`;
  };

  const cli: AgentCli = {
    label: installed('@google/gemini-cli'),
    model,
    resultShape: 'text blocks',
    connectionName: 'Gemini CLI MCP Client',
    signIn: async () => {
      await runOK(home, gemini, ['mcp', 'add', '--scope', 'user', '--transport', 'http', '--trust', 'osfoundry', `${baseURL}/mcp`], { env });
      const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
      writeFileSync(settingsFile, JSON.stringify({ ...settings, security: { auth: { selectedType: 'gemini-api-key' } } }, null, 2));
      return auth();
    },
    // A sign-in it starts by itself (a 401 at connect) is declined: nobody is at the terminal.
    run: (prompt) => startCli(home, gemini, ['-p', prompt], { env, answers: [[/\[Y\/n\]/, 'n\n']] }).done,
    signInAgain: auth,
  };
  await runCliMatrix(cli, browser, 'cli-gemini');
});
