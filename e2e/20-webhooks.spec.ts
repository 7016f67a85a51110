// Webhooks: the owner adds endpoints on the project's Webhooks page, sees the
// signing secret once, sends a test and watches it arrive in the delivery
// log; an agent's note then reaches both endpoints. The receiver is a real
// HTTP server on loopback that checks every JSON delivery with the
// independent `standardwebhooks` library (npm), as a customer's would.
import { test, expect } from '@playwright/test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { signIn, mintToken, callTool, toolJSON, expectAccessible } from './helpers';

const project = 'Webhooks E2E';

/** One request the receiver got, with the library's verdict. */
type Hit = { path: string; verified: boolean; error?: string; body: string; headers: Record<string, string>; payload?: any };

const hits: Hit[] = [];
let secret = '';
let receiver: Server;
let receiverURL = '';

test.beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const hit: Hit = { path: req.url ?? '', verified: false, body, headers };
      if (hit.path === '/json') {
        try {
          hit.payload = new Webhook(secret).verify(body, headers);
          hit.verified = true;
        } catch (e) {
          hit.error = String(e);
        }
      } else {
        hit.payload = JSON.parse(body);
      }
      hits.push(hit);
      res.writeHead(hit.path === '/json' && !hit.verified ? 400 : 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverURL = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

test('an owner adds webhooks, sends a test, and an agent note reaches both, verified with standardwebhooks', async ({ page }, testInfo) => {
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: `${shots}/project-page.png` });
  await page.getByTestId('project-webhooks').click();
  await expect(page.getByRole('heading', { name: 'Webhooks' })).toBeVisible();
  await expect(page.getByTestId('no-webhooks')).toBeVisible();

  // The server refuses what the browser lets through, next to the field.
  await page.getByLabel('URL', { exact: true }).fill('https://bot:hunter2@hooks.example.com/x');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.getByTestId('error-url')).toContainText('user name and password');
  await expect(page.getByLabel('URL', { exact: true })).toHaveAttribute('aria-invalid', 'true');

  // A Slack-compatible endpoint for every note.
  await page.getByLabel('URL', { exact: true }).fill(`${receiverURL}/slack`);
  await page.getByLabel('Slack-compatible').check();
  await page.getByLabel('All notes').check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.getByTestId('webhook-secret-value')).toHaveValue(/^whsec_/);
  await page.getByTestId('crumb-webhooks').click();

  // A JSON endpoint for agents' notes (the default): its secret, once.
  await page.getByLabel('URL', { exact: true }).fill(`${receiverURL}/json`);
  await page.getByLabel('JSON').check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.getByTestId('webhook-secret')).toContainText('shown only once');
  secret = await page.getByTestId('webhook-secret-value').inputValue();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  await page.screenshot({ path: `${shots}/webhook-secret.png`, fullPage: true });
  await expectAccessible(page);
  // The page came back from the form's POST; the endpoint's own address is
  // where its actions post.
  const endpointURL = (await page.getByTestId('webhook-send-test').locator('xpath=..').getAttribute('action'))!.replace(/\/test$/, '');
  await page.goto(endpointURL);
  await expect(page.getByTestId('webhook-url')).toHaveText(`${receiverURL}/json`);
  await expect(page.getByTestId('webhook-secret')).toHaveCount(0);
  expect(await page.content()).not.toContain(secret);

  // Send test: the log shows it waiting, then delivered without a reload.
  await page.getByTestId('webhook-send-test').click();
  await expect(page).toHaveURL(new RegExp(`${endpointURL}$`));
  const testRow = page.getByTestId('delivery').first();
  await expect(testRow.getByTestId('delivery-event')).toHaveText('Test');
  await expect(testRow.getByTestId('delivery-state')).toHaveText('delivered', { timeout: 10_000 });
  await expect(testRow.getByTestId('delivery-response')).toHaveText('200');
  const testHit = hits.find((h) => h.path === '/json');
  expect(testHit?.verified, testHit?.error).toBe(true);
  expect(testHit?.payload.type).toBe('webhook.test');

  // The library really checks: a changed body or another secret is refused.
  expect(() => new Webhook(secret).verify(testHit!.body + ' ', testHit!.headers)).toThrow();
  expect(() => new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(testHit!.body, testHit!.headers)).toThrow();

  // An agent: a token seated in the project, a profile, a session it is invited to.
  const { token } = mintToken({ client: 'Webhook agent', projects: [project] });
  const claimed = toolJSON(await callTool(token, 'claim_connected_profile', { handle: 'hook-agent', display_name: 'Hook Agent' }));
  await page.goto('/');
  await page.getByRole('link', { name: project }).click();
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill('Release train');
  await page.getByRole('button', { name: 'Create session' }).click();
  const publicId = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Hook Agent (@hook-agent)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@hook-agent');

  const posted = toolJSON(await callTool(token, 'post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Deploy needs approval',
    body: 'Staging is green. Ship it?', idempotency_key: 'webhook-e2e-1',
  }));
  await expect.poll(() => hits.filter((h) => h.payload?.note?.id === posted.id || h.payload?.text?.includes('Deploy needs approval')).length,
    { timeout: 10_000 }).toBe(2);
  const note = hits.find((h) => h.path === '/json' && h.payload?.type === 'note.posted')!;
  expect(note.verified, note.error).toBe(true);
  expect(note.headers['webhook-id']).toMatch(/^msg_/);
  expect(note.payload.note).toMatchObject({ id: posted.id, subject: 'Deploy needs approval', body: 'Staging is green. Ship it?',
    sender: { kind: 'agent', slug: claimed.sender_slug, name: 'Hook Agent', label: 'outside assistant' } });
  expect(note.payload.session).toMatchObject({ session_type: 'team_session', session_id: publicId, title: 'Release train' });
  expect(note.payload.project.name).toBe(project);
  expect(note.payload.links.session).toMatch(/\/sessions\/\d+$/);
  const slack = hits.find((h) => h.path === '/slack' && h.payload?.text?.includes('Deploy needs approval'))!;
  expect(Object.keys(slack.payload)).toEqual(['text']);
  expect(slack.payload.text).toContain('Hook Agent (outside assistant) in Release train');
  expect(slack.payload.text).toContain(note.payload.links.session);

  // The delivery log and the list show it; screenshots of both pages.
  await page.goto(endpointURL);
  await expect(page.getByTestId('delivery').first().getByTestId('delivery-event')).toContainText('Deploy needs approval');
  await expect(page.getByTestId('delivery').first().getByTestId('delivery-state')).toHaveText('delivered');
  await page.screenshot({ path: `${shots}/webhook-endpoint.png`, fullPage: true });
  await expectAccessible(page);
  await page.getByTestId('crumb-webhooks').click();
  await expect(page.getByTestId('webhook-item')).toHaveCount(2);
  await page.screenshot({ path: `${shots}/webhooks-settings.png`, fullPage: true });
  await expectAccessible(page);
  for (const name of ['webhooks-settings', 'webhook-secret', 'webhook-endpoint']) {
    await testInfo.attach(name, { path: `${shots}/${name}.png`, contentType: 'image/png' });
  }
  expect(hits.filter((h) => h.path === '/json' && !h.verified)).toEqual([]);
});
