// Agent CLI: opencode (opencode-ai), its model a scripted Chat Completions
// API on loopback (a custom provider in opencode.json with options.baseURL,
// @ai-sdk/openai-compatible, bundled in the binary). osFoundry is a remote
// MCP server with a static token in headers.Authorization, minted with
// `osfoundry token create`: opencode starts OAuth only when connecting
// answers 401, and tools/list answers anyone. Its config, data and cache
// folders (XDG_*) and HOME are a temp folder removed at the end.
import { test } from '@playwright/test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClientHome, afterClientTest, installed, onCleanup } from './client-matrix';
import { baseURL, mintToken } from './helpers';
import { CookieBrowser } from './oauth-client';
import { runCliMatrix, type AgentCli } from './cli/matrix';
import { ScriptedModel } from './cli/model-api';
import { startCli } from './cli/run';

test.afterEach(afterClientTest);
// After the revocation opencode's connect is refused and it starts an OAuth
// sign-in of its own, which the run waits out; beside another CLI spec on a
// busy machine the whole takes over a minute.
test.describe.configure({ timeout: 120_000 });

const opencode = join(__dirname, '..', 'node_modules', '.bin', 'opencode');

test('agent CLI: opencode with a static token', async () => {
  const browser = new CookieBrowser();
  await browser.signInOrSetUp();
  const model = await ScriptedModel.start('chat');
  onCleanup(() => model.close());
  const home = new ClientHome();
  const connectionName = 'opencode static token';
  const configure = (token: string) => {
    const dir = join(home.dir, 'config', 'opencode');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'opencode.json'), JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Scripted model',
          options: { baseURL: `${model.origin}/v1`, apiKey: 'unused' },
          models: { 'scripted-model': { name: 'Scripted model', tool_call: true } },
        },
      },
      model: 'scripted/scripted-model',
      mcp: { osfoundry: { type: 'remote', url: `${baseURL}/mcp`, headers: { Authorization: `Bearer ${token}` } } },
    }, null, 2));
  };
  const tmpDir = () => {
    const dir = join(home.dir, 'tmp');
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const cli: AgentCli = {
    label: installed('opencode-ai'),
    model,
    resultShape: 'text blocks',
    connectionName,
    signIn: async () => {
      configure(mintToken({ client: connectionName }).token);
      return 'static token from `osfoundry token create` in mcp.osfoundry.headers.Authorization';
    },
    run: (prompt) => startCli(home, opencode, ['run', prompt], {
      // opencode is built with Bun, which unpacks a 5 MB library into TMPDIR at each start:
      // a folder of its home, removed with it, rather than /tmp.
      env: { OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', TMPDIR: tmpDir() },
      closeStdin: true,
    }).done,
    signInAgain: async () => {
      configure(mintToken({ client: `${connectionName} 2` }).token);
      return 'a new token in headers.Authorization';
    },
  };
  await runCliMatrix(cli, browser, 'cli-opencode');
});
