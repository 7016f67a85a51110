// Agent CLI: GitHub Copilot CLI (@github/copilot), its model a scripted
// Chat Completions API on loopback through its BYOK switches
// (COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_API_KEY, COPILOT_MODEL) with
// COPILOT_OFFLINE=true, so no GitHub sign-in or other network access.
// osFoundry is added with `copilot mcp add --transport http … --header
// "Authorization: Bearer …"`, the token minted on the Connections page.
// (Its OAuth sign-in identifies it with a client metadata document on
// github.com, which this server cannot fetch here.) HOME (with ~/.copilot)
// is a temp folder removed at the end; the package the binary unpacks on
// first start is kept in node_modules/.cache/copilot.
import { test } from '@playwright/test';
import { join } from 'node:path';
import { ClientHome, afterClientTest, installed, onCleanup } from './client-matrix';
import { baseURL } from './helpers';
import { CookieBrowser } from './oauth-client';
import { runCliMatrix, type AgentCli } from './cli/matrix';
import { ScriptedModel } from './cli/model-api';
import { runOK, startCli } from './cli/run';

test.afterEach(afterClientTest);
// The first start unpacks the CLI (about 200 MB) into the package cache.
test.describe.configure({ timeout: 120_000 });

const root = join(__dirname, '..');
const copilot = join(root, 'node_modules', '.bin', 'copilot');

test('agent CLI: Copilot CLI with a token in --header', async () => {
  const browser = new CookieBrowser();
  await browser.signInOrSetUp();
  const model = await ScriptedModel.start('chat');
  onCleanup(() => model.close());
  const home = new ClientHome();
  const env = {
    COPILOT_PKG_CACHE_HOME: join(root, 'node_modules', '.cache', 'copilot'),
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${model.origin}/v1`,
    COPILOT_PROVIDER_API_KEY: 'unused',
    COPILOT_MODEL: 'scripted-model',
  };
  const connectionName = 'Copilot CLI static token';
  const add = (token: string) => runOK(home, copilot, ['mcp', 'add', '--transport', 'http', 'osfoundry', `${baseURL}/mcp`, '--header', `Authorization: Bearer ${token}`], { env, timeoutMs: 90_000 });
  const cli: AgentCli = {
    label: installed('@github/copilot'),
    model,
    resultShape: 'text blocks',
    connectionName,
    // After revocation its connect gets 401, yet it offers the tools it listed before.
    keepsListedTools: true,
    signIn: async () => {
      await add(await browser.mintToken(connectionName));
      return 'token from Connections in `copilot mcp add --header "Authorization: Bearer …"`';
    },
    run: (prompt) => startCli(home, copilot, ['-p', prompt, '--allow-all-tools'], { env, closeStdin: true }).done,
    signInAgain: async () => {
      await runOK(home, copilot, ['mcp', 'remove', 'osfoundry'], { env });
      await add(await browser.mintToken(`${connectionName} 2`));
      return '`copilot mcp remove osfoundry`, then `copilot mcp add` with a new token';
    },
  };
  await runCliMatrix(cli, browser, 'cli-copilot');
});
