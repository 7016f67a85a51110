// Agent CLI: Codex (@openai/codex), its model a scripted Responses API on
// loopback: a custom provider in config.toml (model_providers.<id>.base_url,
// wire_api = "responses"). osFoundry is added with `codex mcp add
// osfoundry --url …`, which starts the OAuth sign-in itself: it prints and
// opens the authorization URL and waits on a loopback callback. The URL is
// followed headlessly (the owner signs in and approves) and the redirect
// delivered to Codex. By default Codex identifies itself with its client
// metadata document on chatgpt.com, which this server cannot fetch here;
// `codex mcp login osfoundry --oauth-client-registration dcr` registers
// instead. CODEX_HOME and HOME are a temp folder removed at the end.
import { test } from '@playwright/test';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClientHome, afterClientTest, approveWhile, installed, onCleanup } from './client-matrix';
import { baseURL } from './helpers';
import { CookieBrowser } from './oauth-client';
import { dependsOn, KnownGap, metadataDocumentsOn } from './cli/gaps';
import { runCliMatrix, type AgentCli } from './cli/matrix';
import { ScriptedModel } from './cli/model-api';
import { startCli, type CliProcess } from './cli/run';

test.afterEach(afterClientTest);
test.describe.configure({ timeout: 120_000 });

const codex = join(__dirname, '..', 'node_modules', '.bin', 'codex');

/** The first authorization URL the command prints or opens. */
async function authorizationURL(p: CliProcess): Promise<URL> {
  for (;;) {
    const [url] = p.newAuthorizationURLs();
    if (url) return new URL(url);
    if (p.child.exitCode !== null) throw new Error(`ended before asking to authorize: ${p.output().trim().split('\n').slice(-6).join(' / ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What an error page says, in a few words. */
function words(html: string): string {
  const text = (html.match(/<main[\s\S]*<\/main>/)?.[0] ?? html).replace(/<[^>]+>/g, ' ').replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();
  return text.match(/the client's metadata document at \S+ could not be used/)?.[0] ?? text.slice(0, 200);
}

test('agent CLI: Codex with OAuth', async () => {
  const browser = new CookieBrowser();
  await browser.signInOrSetUp();
  const model = await ScriptedModel.start('responses');
  onCleanup(() => model.close());
  const home = new ClientHome();
  const codexHome = join(home.dir, 'codex');
  const env = { CODEX_HOME: codexHome };
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, 'config.toml'), [
    'model = "scripted-model"',
    'model_provider = "scripted"',
    '',
    '[model_providers.scripted]',
    'name = "Scripted model"',
    `base_url = "${model.origin}/v1"`,
    'wire_api = "responses"',
    '',
  ].join('\n'));

  // Follows the authorization URL of a running `codex mcp add/login` and delivers the redirect.
  const login = async (args: string[]) => {
    const p = startCli(home, codex, args, { env, closeStdin: true });
    const done = p.done.then((r) => {
      if (r.code !== 0) throw new Error(`codex ${args.slice(0, 2).join(' ')} exited ${r.code ?? r.signal}: ${r.tail}`);
      return r.out;
    });
    const asked: string[] = [];
    await approveWhile(done, () => p.newAuthorizationURLs(), browser, (u) => asked.push(`client_id ${u.searchParams.get('client_id')}, asked "${u.searchParams.get('scope')}"`));
    if (asked.length !== 1 || !asked[0].endsWith('asked "osfoundry:read osfoundry:write"')) throw new Error(`expected one authorization for both scopes: ${asked.join('; ')}`);
    return asked[0];
  };

  const run = (prompt: string) => startCli(home, codex, ['exec', '--skip-git-repo-check', prompt], { env, closeStdin: true }).done;
  const cli: AgentCli = {
    label: installed('@openai/codex'),
    model,
    resultShape: 'structured content only',
    connectionName: 'Codex',
    signIn: async () => {
      const add = startCli(home, codex, ['mcp', 'add', 'osfoundry', '--url', `${baseURL}/mcp`], { env, closeStdin: true });
      const url = await authorizationURL(add);
      const auto = await dependsOn(metadataDocumentsOn, async () => {
        const res = await browser.fetch(url);
        const html = await res.text();
        if (!html.includes('data-testid="consent"')) throw new Error(`\`codex mcp add\` asked with client_id ${url.searchParams.get('client_id')}; the authorization page answered ${res.status}: ${words(html)}`);
        const back = await browser.approve(url);
        await (await fetch(back, { redirect: 'manual' })).arrayBuffer();
        const r = await add.done;
        if (r.code !== 0) throw new Error(`codex mcp add exited ${r.code}: ${r.tail}`);
        return `\`codex mcp add\` signed in by itself (client_id ${url.searchParams.get('client_id')})`;
      });
      let note = typeof auto === 'string' ? auto : '';
      if (auto instanceof KnownGap) {
        add.kill();
        await add.done;
        const asked = await login(['mcp', 'login', 'osfoundry', '--oauth-client-registration', 'dcr']);
        note = `${auto.note}; then \`codex mcp login osfoundry --oauth-client-registration dcr\` signed in (${asked})`;
      }
      // Open-world tools (post_session_note, reply_to_sender) under `codex exec`.
      const { value } = await model.play(async (c) => ({ text: 'Done.', read: await c.call('post_session_note', {
        session_type: 'team_session', session_id: 's_none', subject: 'Hi', body: 'Hi', idempotency_key: 'codex-approval',
      }) }), run('Post a note.'));
      if (/Claim a profile|not invited|session not found/i.test(value.read)) throw new Error(`post_session_note reached the server without default_tools_approval_mode: ${value.read}`);
      const config = readFileSync(join(codexHome, 'config.toml'), 'utf8');
      if (!config.trimEnd().endsWith(`url = "${baseURL}/mcp"`)) throw new Error(`codex mcp add left [mcp_servers.osfoundry] elsewhere:\n${config}`);
      appendFileSync(join(codexHome, 'config.toml'), 'default_tools_approval_mode = "approve"\n');
      const refused = value.read.replace(/\s+/g, ' ').slice(0, 160);
      return auto instanceof KnownGap ? new KnownGap(auto.gap, `${note}; without default_tools_approval_mode post_session_note gave the model "${refused}"`)
        : `${note}; without default_tools_approval_mode post_session_note gave the model "${refused}"`;
    },
    run,
    signInAgain: async () => {
      return `\`codex mcp login osfoundry --oauth-client-registration dcr\` (${await login(['mcp', 'login', 'osfoundry', '--oauth-client-registration', 'dcr'])})`;
    },
  };
  await runCliMatrix(cli, browser, 'cli-codex');
});
