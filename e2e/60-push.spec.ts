// The owner's phone, in Chromium: the app is installable (a valid manifest,
// the service worker registered and controlling the page, the offline page
// from its cache); "Notify this device" asks permission on its click only
// and lists the device; a question's push goes from the server to a push
// service (a local stand-in that decrypts it with the device's keys, as a
// phone would), is delivered to the real service worker through the
// DevTools protocol (ServiceWorker.deliverPushMessage), shows its
// notification, whose click opens the note and whose action answers the
// waiting ask_owner. UPDATE_DOCS_SCREENSHOT=1 refreshes the pictures in docs/.
import { test, expect, type Page, type Worker, type BrowserContext } from '@playwright/test';
import { createDecipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { signIn, mintToken, callTool, toolJSON, expectAccessible, baseURL } from './helpers';

const project = 'Push E2E';
const title = 'Checkout redesign';
let publicId = '';
let sessionPath = '';
let token = '';

// ---- A push service stand-in: it keeps what it is sent, decrypted (RFC 8291).

type Pushed = { authorization: string; topic: string; urgency: string; payload: any };
const device: { ecdh: ECDH; auth: Buffer } = { ecdh: createECDH('prime256v1'), auth: randomBytes(16) };
device.ecdh.generateKeys();
const pushed: Pushed[] = [];
let pushService: Server;
let endpoint = '';

function decrypt(body: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const idLen = body[20];
  const asPublic = body.subarray(21, 21 + idLen);
  const secret = device.ecdh.computeSecret(asPublic);
  const info = Buffer.concat([Buffer.from('WebPush: info\0'), device.ecdh.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', secret, device.auth, info, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const sealed = body.subarray(21 + idLen);
  const d = createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  const record = Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
  let i = record.length - 1;
  while (i >= 0 && record[i] === 0) i--;
  if (record[i] !== 2) throw new Error('no last-record delimiter');
  return record.subarray(0, i);
}

test.beforeAll(async () => {
  pushService = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const plain = decrypt(Buffer.concat(chunks));
        pushed.push({ authorization: String(req.headers.authorization), topic: String(req.headers.topic), urgency: String(req.headers.urgency),
          payload: JSON.parse(plain.toString('utf8')) });
        res.writeHead(201).end();
      } catch (e) {
        res.writeHead(400).end(String(e));
      }
    });
  });
  await new Promise<void>((r) => pushService.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(pushService.address() as AddressInfo).port}/push/device-1`;
});

test.afterAll(async () => { await new Promise((r) => pushService.close(r)); });

async function tool(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await callTool(token, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return toolJSON(r);
}

async function shot(page: Page, name: string, dir: string): Promise<void> {
  const png = await page.screenshot({ fullPage: false });
  writeFileSync(`${dir}/${name}`, png);
  if (process.env.UPDATE_DOCS_SCREENSHOT) writeFileSync(`docs/${name}`, png);
}

async function worker(context: BrowserContext): Promise<Worker> {
  const found = context.serviceWorkers().find((w) => w.url().endsWith('/sw.js'));
  return found ?? context.waitForEvent('serviceworker', { predicate: (w) => w.url().endsWith('/sw.js') });
}

test.describe.configure({ mode: 'serial' });

test('the app is installable: manifest, service worker in control, offline page', async ({ page, context }) => {
  await signIn(page);
  await page.goto('/inbox');
  const href = await page.locator('link[rel="manifest"]').getAttribute('href');
  expect(href).toBe('/manifest.webmanifest');
  const manifest = await (await page.request.get(href!)).json();
  expect(manifest).toMatchObject({ name: 'osFoundry', short_name: 'osFoundry', start_url: '/inbox', display: 'standalone' });
  expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/);
  expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/);
  for (const want of ['192x192 any', '512x512 any', '512x512 maskable']) {
    const icon = manifest.icons.find((i: any) => `${i.sizes} ${i.purpose}` === want);
    expect(icon, want).toBeTruthy();
    const res = await page.request.get(icon.src);
    expect(res.headers()['content-type']).toBe('image/png');
  }
  await expect(page.locator('meta[name="theme-color"]')).toHaveCount(2);

  // Chromium itself finds the manifest valid and the app installable.
  const cdp = await context.newCDPSession(page);
  const parsed: any = await cdp.send('Page.getAppManifest');
  expect(parsed.errors).toEqual([]);
  expect(parsed.url).toBe(`${baseURL}/manifest.webmanifest`);

  // The worker registers, activates and, after a reload, controls the page.
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
  expect(scope).toBe(`${baseURL}/`);
  await page.reload();
  await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? '')).toBe(`${baseURL}/sw.js`);
  // Chromium checks every installability criterion; the one left is that
  // a Playwright context is an incognito profile, where nothing installs.
  const installability: any = await cdp.send('Page.getInstallabilityErrors');
  expect(installability.installabilityErrors.map((e: any) => e.errorId)).toEqual(['in-incognito']);

  // Offline, a page shows the cached offline page, styled from the cache.
  await context.setOffline(true);
  await page.goto('/connections');
  await expect(page.getByTestId('offline')).toContainText('You are offline');
  expect(await page.evaluate(() => getComputedStyle(document.body).fontFamily)).toContain('system-ui');
  await context.setOffline(false);
});

test('"Notify this device" asks on its click only, and lists the device', async ({ page, context }, testInfo) => {
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await context.grantPermissions(['notifications'], { origin: baseURL });
  // Headless Chromium has no push service of its own: the browser's
  // subscription is the stand-in's, with the device's keys.
  await page.addInitScript(({ endpoint, p256dh, auth }) => {
    const w = window as any;
    w.__asked = 0;
    const ask = Notification.requestPermission.bind(Notification);
    Notification.requestPermission = (() => { w.__asked++; return ask(); }) as any;
    const sub = { endpoint, toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }) };
    (PushManager.prototype as any).getSubscription = function () { return Promise.resolve(w.__subscribed ? sub : (localStorage.getItem('sub') ? sub : null)); };
    (PushManager.prototype as any).subscribe = function (opts: any) {
      w.__serverKey = btoa(String.fromCharCode(...new Uint8Array(opts.applicationServerKey))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      w.__userVisibleOnly = opts.userVisibleOnly;
      localStorage.setItem('sub', '1');
      return Promise.resolve(sub);
    };
  }, { endpoint, p256dh: device.ecdh.getPublicKey().toString('base64url'), auth: device.auth.toString('base64url') });
  await signIn(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/account');
  await expect(page.getByTestId('device-none')).toBeVisible();
  expect(await page.evaluate(() => (window as any).__asked)).toBe(0);
  const serverKey = await page.locator('[data-push-subscribe]').getAttribute('data-push-subscribe');
  expect(Buffer.from(serverKey!, 'base64url')).toHaveLength(65);
  await page.getByTestId('push-subscribe').click();
  await expect(page.getByTestId('account-notice')).toHaveText('This device is notified from now on.');
  await expect(page.getByTestId('device')).toHaveCount(1);
  await expect(page.getByTestId('device-name')).toHaveValue('Chrome on Linux');
  await expect(page.getByTestId('device-last-push')).toHaveText('No push yet');
  await expect(page.locator('[data-this-device]')).toBeVisible();
  await page.getByTestId('device-name').fill("Olivia's phone");
  await page.getByTestId('device-rename').click();
  await expect(page.getByTestId('account-notice')).toHaveText('The device is renamed.');
  await expect(page.getByTestId('device-name')).toHaveValue("Olivia's phone");
  await expectAccessible(page);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});

test('a question is pushed, shown by the worker, opens its note, and its action answers the waiting agent', async ({ page, context }, testInfo) => {
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await context.grantPermissions(['notifications'], { origin: baseURL });
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  ({ token } = mintToken({ client: 'Push agent', projects: [project] }));
  await tool('claim_connected_profile', { handle: 'push-bot', display_name: 'Ask Bot' });
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill(title);
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText(title);
  sessionPath = new URL(page.url()).pathname;
  publicId = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Ask Bot (@push-bot)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@push-bot');
  await page.goto('/inbox');
  await expect.poll(() => page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);

  // The agent asks and waits; the push reaches the push service at once.
  const waiting = tool('ask_owner', { session_type: 'team_session', session_id: publicId, idempotency_key: 'push-1',
    question: 'Ship the new checkout today?\nThe long explanation stays on the server.', options: ['Yes', 'No'],
    urgency: 'blocking', wait_seconds: 60 });
  await expect.poll(() => pushed.length, { timeout: 20_000 }).toBe(1);
  const { payload, authorization, urgency, topic } = pushed[0];
  expect(authorization).toMatch(/^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=[\w-]+$/);
  expect(urgency).toBe('high');
  expect(payload).toMatchObject({ title: 'Ask Bot asks in Checkout redesign', body: 'Ship the new checkout today?',
    actions: [{ action: '0', title: 'Yes' }, { action: '1', title: 'No' }] });
  expect(topic).toBe(payload.tag);
  expect(JSON.stringify(payload)).not.toContain('long explanation');

  // Delivered to the real service worker as the push service would.
  const sw = await worker(context);
  const cdp = await context.newCDPSession(page);
  const registrationId = await new Promise<string>((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e: any) => {
      const r = e.registrations.find((r: any) => r.scopeURL === `${baseURL}/` && !r.isDeleted);
      if (r) resolve(r.registrationId);
    });
    cdp.send('ServiceWorker.enable');
  });
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: baseURL, registrationId, data: JSON.stringify(payload) });
  const shown = async () => sw.evaluate(async (tag) => (await (self as any).registration.getNotifications({ tag }))
    .map((n: any) => ({ title: n.title, body: n.body, actions: n.actions.map((a: any) => a.title), url: n.data?.url })), payload.tag);
  await expect.poll(async () => (await shown()).length).toBe(1);
  const [n] = await shown();
  expect(n).toEqual({ title: payload.title, body: payload.body, actions: ['Yes', 'No'], url: payload.url });

  // Its click opens the note in place (the worker's click handler, called
  // with the notification shown: a test cannot click the system's).
  await sw.evaluate(async (tag) => {
    const [shownNote] = await (self as any).registration.getNotifications({ tag });
    await (self as any).osfoundry.openNote(shownNote);
  }, payload.tag);
  await expect(page).toHaveURL(new RegExp(`${sessionPath}\\?note=\\d+#note-\\d+$`));
  await expect(page.getByTestId('question-options')).toBeVisible();

  // An action answers, and the waiting agent gets the answer.
  await sw.evaluate(async (tag) => {
    const [shownNote] = await (self as any).registration.getNotifications({ tag });
    await (self as any).osfoundry.answer(shownNote, '0');
  }, payload.tag);
  const answered = await waiting;
  expect(answered).toMatchObject({ status: 'answered', answer: 'Yes', answered_by: 'Olivia Owner' });
  await expect.poll(async () => (await shown())[0]?.title).toBe('Answered: Yes');

  // The server then replaces the notification on each device it reached:
  // the same tag, who answered, no options.
  await expect.poll(() => pushed.length, { timeout: 20_000 }).toBe(2);
  expect(pushed[1].payload).toMatchObject({ tag: payload.tag, title: 'Olivia Owner answered: Yes', silent: true });
  expect(pushed[1].payload.actions).toBeUndefined();
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: baseURL, registrationId, data: JSON.stringify(pushed[1].payload) });
  await expect.poll(async () => (await shown())[0]).toMatchObject({ title: 'Olivia Owner answered: Yes', actions: [] });

  // A second answer is refused, naming who answered.
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: baseURL, registrationId, data: JSON.stringify(payload) });
  await expect.poll(async () => (await shown())[0]?.title).toBe(payload.title);
  await sw.evaluate(async (tag) => {
    const [shownNote] = await (self as any).registration.getNotifications({ tag });
    await (self as any).osfoundry.answer(shownNote, '1');
  }, payload.tag);
  await expect.poll(async () => (await shown())[0]?.title).toBe('Olivia Owner answered this question already: Yes');

  // The start page and the devices list, at 390 px.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/inbox');
  await shot(page, 'screenshot-phone-inbox.png', shots);
  await page.goto('/account#devices');
  await expect(page.getByTestId('device-last-push')).not.toHaveText('No push yet');
  await page.locator('#devices').scrollIntoViewIfNeeded();
  const png = await page.locator('#devices').screenshot();
  writeFileSync(`${shots}/screenshot-phone-devices.png`, png);
  if (process.env.UPDATE_DOCS_SCREENSHOT) writeFileSync('docs/screenshot-phone-devices.png', png);
});

test('an approval is pushed with Allow and Deny, and Allow from the notification decides it', async ({ page, context }) => {
  await context.grantPermissions(['notifications'], { origin: baseURL });
  await signIn(page);
  await page.goto('/inbox');
  await expect.poll(() => page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
  const before = pushed.length;
  // The agent's hook asks; the push reaches the push service at once.
  const res = await fetch(`${baseURL}/agent/approvals`, { method: 'POST', headers: { Authorization: `Bearer ${token}` },
    body: JSON.stringify({ tool: 'Bash', summary: 'npm publish --tag next', repo: 'acme/shop', branch: 'main' }) });
  expect(res.status).toBe(201);
  const { id } = await res.json();
  await expect.poll(() => pushed.length, { timeout: 20_000 }).toBe(before + 1);
  const { payload, urgency, topic } = pushed[before];
  expect(urgency).toBe('high');
  expect(topic).toBe(`approval-${id}`);
  expect(payload).toMatchObject({ title: '@push-bot asks to run `npm publish --tag next` in acme/shop main', body: 'npm publish --tag next',
    tag: `approval-${id}`, answer_url: `/approvals/${id}/decide`, answer_field: 'verdict',
    actions: [{ action: 'allow', title: 'Allow' }, { action: 'deny', title: 'Deny' }] });

  const sw = await worker(context);
  const cdp = await context.newCDPSession(page);
  const registrationId = await new Promise<string>((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e: any) => {
      const r = e.registrations.find((r: any) => r.scopeURL === `${baseURL}/` && !r.isDeleted);
      if (r) resolve(r.registrationId);
    });
    cdp.send('ServiceWorker.enable');
  });
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: baseURL, registrationId, data: JSON.stringify(payload) });
  const shown = async () => sw.evaluate(async (tag) => (await (self as any).registration.getNotifications({ tag }))
    .map((n: any) => ({ title: n.title, actions: n.actions.map((a: any) => a.title) })), payload.tag);
  await expect.poll(async () => (await shown())[0]).toEqual({ title: payload.title, actions: ['Allow', 'Deny'] });

  // Allow, from the worker, decides it as the page's button would.
  await sw.evaluate(async (tag) => {
    const [shownNote] = await (self as any).registration.getNotifications({ tag });
    await (self as any).osfoundry.answer(shownNote, 'allow');
  }, payload.tag);
  await expect.poll(async () => (await shown())[0]?.title).toBe('Allowed');
  const state = await (await fetch(`${baseURL}/agent/approvals/${id}?wait=0`, { headers: { Authorization: `Bearer ${token}` } })).json();
  expect(state).toMatchObject({ state: 'allowed', decided_by: 'Olivia Owner' });
  await expect.poll(() => pushed.length, { timeout: 20_000 }).toBe(before + 2);
  expect(pushed[before + 1].payload).toMatchObject({ tag: payload.tag, title: 'Olivia Owner allowed @push-bot to use Bash', silent: true });

  // Deny afterwards is refused, naming who decided.
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: baseURL, registrationId, data: JSON.stringify(payload) });
  await expect.poll(async () => (await shown())[0]?.title).toBe(payload.title);
  await sw.evaluate(async (tag) => {
    const [shownNote] = await (self as any).registration.getNotifications({ tag });
    await (self as any).osfoundry.answer(shownNote, 'deny');
  }, payload.tag);
  await expect.poll(async () => (await shown())[0]?.title).toBe('Olivia Owner allowed this already');
});
