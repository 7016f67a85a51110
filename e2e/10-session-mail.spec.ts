// The owner's Team mail tab with an agent talking over MCP: notes arrive
// without a reload, the sidebar shows self-reported status, the owner
// replies at the agent's sender slug and the agent reads the reply.
import { test, expect, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import * as sdkAuth from '@modelcontextprotocol/sdk/client/auth.js';
import { baseURL, signIn, callTool, toolJSON, expectAccessible, killNoteHub } from './helpers';
import { CookieBrowser, TestProvider } from './oauth-client';

const project = 'Storefront E2E';
let sessionPath = '';
let publicId = '';
let token = '';
let slug = '';

/**
 * Connects an agent the way a real MCP client does: discovery, dynamic
 * registration, the owner's sign-in and consent, code exchange. Returns the
 * access token.
 */
async function connectAgent(clientName: string): Promise<string> {
  const provider = new TestProvider(new CookieBrowser(), clientName);
  const serverUrl = new URL(`${baseURL}/mcp`);
  expect(await sdkAuth.auth(provider as any, { serverUrl })).toBe('REDIRECT');
  expect(await sdkAuth.auth(provider as any, { serverUrl, authorizationCode: provider.code })).toBe('AUTHORIZED');
  return provider.tokenSet.access_token;
}

/** Calls a tool and fails on an isError result. */
async function tool(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await callTool(token, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return toolJSON(r);
}

/** Records, in the page, when each note row first appears (epoch ms). */
async function watchRows(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Record<string, number> = ((window as any).__rowSeen = {});
    const list = document.getElementById('mail-list')!;
    list.querySelectorAll('[data-note-id]').forEach((el) => { seen[el.getAttribute('data-note-id')!] = 0; });
    new MutationObserver(() => {
      const now = Date.now();
      list.querySelectorAll('[data-note-id]').forEach((el) => {
        const id = el.getAttribute('data-note-id')!;
        if (!(id in seen)) seen[id] = now;
      });
    }).observe(list, { childList: true });
  });
}

/** Records, in the page, every state the live stream goes through. */
async function watchStream(page: Page): Promise<void> {
  await page.evaluate(() => {
    const el = document.querySelector('[data-stream]')!;
    const states: string[] = ((window as any).__streamStates = [el.getAttribute('data-stream-state')!]);
    new MutationObserver(() => { states.push(el.getAttribute('data-stream-state')!); })
      .observe(el, { attributes: true, attributeFilter: ['data-stream-state'] });
  });
}

/** Waits until the page's live stream is open. */
async function streamUp(page: Page): Promise<void> {
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream-state', 'up');
}

/** Makes the page believe it is hidden (or shown again). */
async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => h });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (h ? 'hidden' : 'visible') });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
}

/** The note ids of the rows on the page, top to bottom. */
async function shownIds(page: Page): Promise<number[]> {
  return page.getByTestId('note').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-note-id'))));
}

/** Checks the rows: each once, newest first, every id of want among them. */
async function expectRowsInOrder(page: Page, want: number[]): Promise<void> {
  const shown = await shownIds(page);
  expect(new Set(shown).size, `duplicates in ${shown}`).toBe(shown.length);
  expect(shown).toEqual([...shown].sort((a, b) => b - a));
  for (const id of want) expect(shown).toContain(id);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

test.describe.configure({ mode: 'serial' });

test('an agent posts, the owner sees it live, replies, and the agent reads the reply', async ({ page }, testInfo) => {
  await signIn(page);

  // Project and session through the UI.
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  // The bursts and latency probes below post over a hundred notes a minute
  // from one agent: the most writes a project allows.
  await page.getByTestId('l-write_per_minute').fill('6000');
  await page.getByTestId('l-write_burst').fill('1000');
  await page.getByRole('button', { name: 'Save limits' }).click();
  await expect(page.getByTestId('l-write_burst')).toHaveValue('1000');
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill('Checkout redesign');
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText('Checkout redesign');
  sessionPath = new URL(page.url()).pathname;
  publicId = (await page.getByTestId('session-public-id').textContent())!.trim();

  // An agent connects over OAuth, claims a profile, sets its status.
  token = await connectAgent('E2E Claude Code');
  const claimed = await tool('claim_connected_profile', { handle: 'e2e-claude', display_name: 'E2E Claude' });
  slug = claimed.sender_slug;
  expect(slug).toMatch(/^ext-/);
  await tool('set_status', { repo: 'github.com/acme/storefront', branch: 'feat/checkout', task: 'Wiring the address form' });

  // The owner seats it in the project by handle, then invites it to the session.
  await page.getByTestId('crumb-project').click();
  await page.getByLabel('Seat an agent by handle').fill('e2e-claude');
  await page.getByRole('button', { name: 'Seat agent' }).click();
  await expect(page.getByTestId('seated-agent')).toContainText('@e2e-claude');
  await page.getByTestId('session-link').click();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'E2E Claude (@e2e-claude)' });
  await page.getByLabel('Role').selectOption('contributor');
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@e2e-claude');
  await page.getByTestId('tab-mail').click();
  await expect(page.getByTestId('mail-empty')).toBeVisible();

  // The sidebar shows the status, labelled self-reported.
  const agentCard = page.getByTestId('presence-agent').filter({ hasText: '@e2e-claude' });
  await expect(agentCard.getByTestId('status-task')).toHaveText('Wiring the address form', { timeout: 6_000 });
  await expect(agentCard.getByTestId('presence-status')).toContainText('self-reported');
  await expect(agentCard.getByTestId('presence-tier')).toHaveText('active');

  // The agent posts; the row appears without a reload within 6 s.
  await watchRows(page);
  const posted = await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Question: which API?',
    body: 'v1 or v2?\nv2 has structured errors.', idempotency_key: 'e2e-question-1',
  });
  const returned = Date.now();
  expect(posted.sender_slug).toBe(slug);
  const row = page.locator(`#note-${posted.id}`);
  await expect(row).toBeVisible({ timeout: 6_000 });
  console.log(`note visible ${Date.now() - returned} ms after post_session_note returned`);
  await expect(row.getByTestId('note-sender-name')).toHaveText('E2E Claude');
  await expect(row.getByTestId('note-sender-slug')).toHaveText(slug);
  await expect(row.getByTestId('note-outside')).toHaveText('outside assistant');
  await expect(row.getByTestId('note-recipient')).toHaveText('whole session');
  await expect(row.getByTestId('note-type')).toHaveText('note');
  await expect(row.getByTestId('note-body')).toHaveText('v1 or v2?\nv2 has structured errors.');

  // Screenshots of the session: desktop and phone, light and dark.
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  for (const [name, width, height] of [['desktop', 1440, 900], ['phone', 390, 844]] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme: scheme });
      const file = `${shots}/session-${name}-${scheme}.png`;
      await page.screenshot({ path: file, fullPage: name === 'phone' });
      await testInfo.attach(`session-${name}-${scheme}`, { path: file, contentType: 'image/png' });
    }
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  await expectAccessible(page);

  // The owner replies inline; the reply shows at once, addressed to the slug.
  await row.getByTestId('reply-button').click();
  const composer = page.getByTestId('reply-composer');
  await expect(composer.getByTestId('composer-to')).toHaveText(slug);
  await expect(composer.getByLabel('Subject')).toHaveValue('Re: Question: which API?');
  await composer.getByLabel('Message').fill('Use v2.\nMobile follows next sprint.');
  await expectAccessible(page);
  await composer.getByRole('button', { name: 'Send reply' }).click();
  const reply = page.getByTestId('note').filter({ hasText: 'Mobile follows next sprint.' });
  await expect(reply).toHaveCount(1);
  await expect(reply.getByTestId('note-recipient')).toHaveText(slug);
  await expect(reply.getByTestId('note-type')).toHaveText('reply');
  await expect(composer).toHaveCount(0);

  // The agent reads it with read_session_mail (newest first).
  const mail = await tool('read_session_mail', { session_type: 'team_session', session_id: publicId });
  const got = mail.notes.find((n: any) => n.message_type === 'reply');
  expect(got, JSON.stringify(mail)).toBeTruthy();
  expect(got.to).toBe(slug);
  expect(got.body).toBe('Use v2.\nMobile follows next sprint.');
  expect(mail.notes[0].id).toBeGreaterThan(mail.notes[mail.notes.length - 1].id);

  // An analysis note stays with the owners.
  await page.getByTestId('session-compose-toggle').click();
  const box = page.getByTestId('session-composer');
  await box.getByTestId('composer-analysis').check();
  await box.getByLabel('Subject').fill('Why v2');
  await box.getByLabel('Message').fill('Structured errors pay for the migration.');
  await box.getByRole('button', { name: 'Post' }).click();
  await expect(page.locator('.note.is-analysis')).toHaveCount(1);
  const mail2 = await tool('read_session_mail', { session_type: 'team_session', session_id: publicId });
  expect(mail2.notes.some((n: any) => n.message_type === 'analysis')).toBe(false);

  // The agent clears its status with three nulls; the sidebar follows.
  await tool('set_status', { repo: null, branch: null, task: null });
  await expect(agentCard.getByTestId('status-cleared')).toBeVisible({ timeout: 6_000 });
  await expect(agentCard.getByTestId('status-task')).toHaveCount(0);
});

test('20 notes posted in a burst appear once each, in order', async ({ page }) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  await signIn(page);
  await page.goto(sessionPath);
  const polls: string[] = [];
  page.on('response', (r) => { if (r.url().includes('/mail/poll')) polls.push(`${new Date().toISOString()} ${r.status()} ${r.url()}`); });
  await watchRows(page);
  const before = await page.getByTestId('note').count();

  const returnedAt: Record<string, number> = {};
  const ids: number[] = [];
  await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const r = await tool('post_session_note', {
      session_type: 'team_session', session_id: publicId, subject: `Burst ${i + 1}`,
      body: `note ${i + 1} of 20`, idempotency_key: `e2e-burst-${i + 1}`,
    });
    returnedAt[r.id] = Date.now();
    ids.push(r.id);
  }));
  try {
    await expect(page.getByTestId('note')).toHaveCount(before + 20, { timeout: 12_000 });
  } catch (e) {
    throw new Error(`${e}\npolls seen:\n${polls.join('\n')}`);
  }

  // Each note once, newest first.
  const shown = await page.getByTestId('note').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-note-id'))));
  expect(new Set(shown).size).toBe(shown.length);
  expect(shown).toEqual([...shown].sort((a, b) => b - a));
  for (const id of ids) expect(shown).toContain(id);

  const seen: Record<string, number> = await page.evaluate(() => (window as any).__rowSeen);
  const lat = ids.map((id) => seen[id] - returnedAt[id]);
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  console.log(`burst of 20: post_session_note returned → row visible: mean ${mean.toFixed(0)} ms, max ${Math.max(...lat)} ms`);
});

test('100 notes one by one over the stream: time from post to visible row, and no poll', async ({ page }) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  test.setTimeout(120_000);
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  const polls: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/mail/poll') || r.url().includes('/presence')) polls.push(r.url()); });
  await watchRows(page);
  const fromReturn: number[] = [];
  const fromSend: number[] = [];
  for (let i = 0; i < 100; i++) {
    const sent = Date.now();
    const r = await tool('post_session_note', {
      session_type: 'team_session', session_id: publicId, subject: `Timed ${i + 1}`,
      body: 'latency probe', idempotency_key: `e2e-timed-${i + 1}`,
    });
    const returned = Date.now();
    await expect(page.locator(`#note-${r.id}`)).toBeVisible({ timeout: 6_000 });
    const seen = await page.evaluate((id) => (window as any).__rowSeen[id], String(r.id));
    fromReturn.push(seen - returned);
    fromSend.push(seen - sent);
  }
  const show = (name: string, v: number[]) => {
    const s = [...v].sort((a, b) => a - b);
    return `${name}: p50 ${percentile(s, 0.5)} ms, p99 ${percentile(s, 0.99)} ms, slowest ${s.slice(-3).join(', ')} ms, min ${s[0]} ms`;
  };
  console.log(`100 notes one by one over the live stream (Chromium):\n  ${show('post_session_note returned → row visible', fromReturn)}` +
    `\n  ${show('post_session_note sent → row visible', fromSend)}` +
    `\n  (a negative time: the row showed before the tool call's answer reached the client)`);
  await expectRowsInOrder(page, []);
  expect(polls, 'no poll while the stream is up').toEqual([]);
});

test('a hidden tab keeps receiving: no poll, the count in the title, cleared when shown', async ({ page }) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  const polls: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/mail/poll')) polls.push(r.url()); });
  const title = await page.title();
  expect(title).toBe('Checkout redesign — osFoundry');
  await setHidden(page, true);
  const reads: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/mail/read')) reads.push(r.url()); });
  const a = await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'While hidden', body: 'x', idempotency_key: 'e2e-hidden-1',
  });
  const b = await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Still hidden', body: 'y', idempotency_key: 'e2e-hidden-2',
  });
  await expect(page.locator(`#note-${b.id}`)).toHaveCount(1);
  await expect(page.locator(`#note-${a.id}`)).toHaveCount(1);
  await expect(page).toHaveTitle('(2) Checkout redesign — osFoundry');
  await expect(page.getByTestId('mail-announce')).toHaveText(/New note from E2E Claude: Still hidden/);
  expect(polls, 'no poll goes out while hidden').toEqual([]);
  expect(reads, 'nothing is marked read while hidden').toEqual([]);
  await setHidden(page, false);
  await expect(page).toHaveTitle(title);
  await expect.poll(() => reads.length).toBe(1);
  expect(polls, 'the stream is up: showing the tab sends no poll').toEqual([]);
});

test('the stream dies while notes arrive: the page recovers, nothing twice, nothing missing', async ({ page }) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  test.setTimeout(90_000);
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  await watchStream(page);
  const polls: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/mail/poll')) polls.push(r.url()); });
  const before = await page.getByTestId('note').count();
  const ids: number[] = [];
  for (let i = 0; i < 30; i++) {
    if (i === 8 || i === 20) killNoteHub(); // the server closes every stream; the browser reconnects
    const r = await tool('post_session_note', {
      session_type: 'team_session', session_id: publicId, subject: `Through an outage ${i + 1}`,
      body: 'recovery probe', idempotency_key: `e2e-outage-${i + 1}`,
    });
    ids.push(r.id);
    await page.waitForTimeout(100);
  }
  await expect(page.getByTestId('note')).toHaveCount(before + 30, { timeout: 15_000 });
  await expectRowsInOrder(page, ids);
  await streamUp(page);
  const states: string[] = await page.evaluate(() => (window as any).__streamStates);
  console.log(`stream states through two outages: ${states.join(' → ')}; polls while down: ${polls.length}`);
  expect(states.filter((s) => s === 'down').length, 'the stream went down').toBeGreaterThanOrEqual(1);
  expect(states[states.length - 1]).toBe('up');
});

test('a reconnect that missed more than 100 notes reloads the list', async ({ page }) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  test.setTimeout(90_000);
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  // Hidden (no poll), and every reconnect refused until 101 notes are in.
  await setHidden(page, true);
  await page.route(/\/stream\?/, (r) => r.abort());
  killNoteHub();
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream-state', 'down');
  const ids: number[] = [];
  for (let i = 0; i < 101; i++) {
    const r = await tool('post_session_note', {
      session_type: 'team_session', session_id: publicId, subject: `Missed ${i + 1}`,
      body: 'while away', idempotency_key: `e2e-missed-${i + 1}`,
    });
    ids.push(r.id);
  }
  await page.unroute(/\/stream\?/);
  // The reconnect gets one reload event; the list becomes the newest page.
  await expect(page.locator(`#note-${ids[100]}`)).toHaveCount(1, { timeout: 15_000 });
  await expect(page.getByTestId('note')).toHaveCount(50);
  await expectRowsInOrder(page, ids.slice(51));
  await expect(page.getByTestId('mail-older')).toBeVisible();
  await setHidden(page, false);
});

test('desktop notifications: opt-in toggle, a notification for an agent note while the tab is hidden', async ({ page, context }, testInfo) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  // Notifications are recorded, not shown; the permission is the browser's,
  // or what __permission says.
  await page.addInitScript(() => {
    const Real = (window as any).Notification;
    const shown: any[] = ((window as any).__notifications = []);
    class Recorded {
      constructor(title: string, opts: any) { shown.push({ title, body: opts?.body, tag: opts?.tag }); }
      static get permission() { return (window as any).__permission || Real.permission; }
      static requestPermission() { return Promise.resolve(Recorded.permission); }
      close() {}
    }
    (window as any).Notification = Recorded;
  });
  await context.grantPermissions(['notifications'], { origin: baseURL });
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  const toggle = page.getByTestId('notify-toggle');
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await expect(toggle).toHaveText('Desktop notifications: off');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await page.locator('.mail-tools').screenshot({ path: `${shots}/notify-toggle-off.png` });
  await toggle.click();
  await expect(toggle).toHaveText('Desktop notifications: on');
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await page.locator('.mail-tools').screenshot({ path: `${shots}/notify-toggle-on.png` });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${shots}/session-notify-on.png` });
  await expectAccessible(page);
  // Remembered by the browser.
  await page.reload();
  await expect(toggle).toHaveText('Desktop notifications: on');
  await streamUp(page);

  await setHidden(page, true);
  const r = await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Ready for review',
    body: 'PR #42 is up.', idempotency_key: 'e2e-notify-1',
  });
  await expect(page.locator(`#note-${r.id}`)).toHaveCount(1);
  await expect.poll(() => page.evaluate(() => (window as any).__notifications)).toEqual([
    { title: 'E2E Claude (outside assistant)', body: 'Ready for review', tag: `osfoundry-note-${r.id}` },
  ]);
  // Visible: no notification.
  await setHidden(page, false);
  const r2 = await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Seen on screen',
    body: 'no popup', idempotency_key: 'e2e-notify-2',
  });
  await expect(page.locator(`#note-${r2.id}`)).toHaveCount(1);
  expect(await page.evaluate(() => (window as any).__notifications.length)).toBe(1);

  // Blocked by the browser: the toggle says so.
  await page.evaluate(() => { (window as any).__permission = 'denied'; });
  await page.reload();
  await page.evaluate(() => { (window as any).__permission = 'denied'; });
  await page.getByTestId('notify-toggle').click();
  await expect(toggle).toHaveText('Desktop notifications: blocked by the browser');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await page.locator('.mail-tools').screenshot({ path: `${shots}/notify-toggle-blocked.png` });
});

test('unread counts on the projects and sessions lists follow without a reload', async ({ page }, testInfo) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  await signIn(page);
  await page.goto('/');
  const item = page.getByTestId('project-item').filter({ hasText: project });
  const badge = item.getByTestId('project-unread');
  await expect(badge).toBeHidden();
  await expect(page).toHaveTitle('Projects — osFoundry');
  const first = await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Count me', body: '1', idempotency_key: 'e2e-unread-1',
  });
  await expect(badge).toHaveText('1 unread');
  await expect(page).toHaveTitle('(1) Projects — osFoundry');
  await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'Count me too', body: '2', idempotency_key: 'e2e-unread-2',
  });
  await expect(badge).toHaveText('2 unread');
  await expectAccessible(page);
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}/projects-unread.png` });

  await item.getByTestId('project-link').click();
  const sessionBadge = page.getByTestId('session-item').filter({ hasText: 'Checkout redesign' }).getByTestId('session-unread');
  await expect(sessionBadge).toHaveText('2 unread');
  await expect(page).toHaveTitle(`(2) ${project} — osFoundry`);
  await tool('post_session_note', {
    session_type: 'team_session', session_id: publicId, subject: 'And me', body: '3', idempotency_key: 'e2e-unread-3',
  });
  await expect(sessionBadge).toHaveText('3 unread');
  await expect(page).toHaveTitle(`(3) ${project} — osFoundry`);

  // Reading the session (another tab) clears the count here.
  const other = await page.context().newPage();
  await other.goto(sessionPath);
  await expect(other.locator(`#note-${first.id}`)).toHaveCount(1);
  await expect(sessionBadge).toBeHidden();
  await expect(page).toHaveTitle(`${project} — osFoundry`);
  await other.close();
});

test('signing out in another tab ends the stream: the session page goes to sign in', async ({ page }) => {
  // The file runs serially: the first test creates the session every later one uses.
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  const lists = await page.context().newPage();
  await lists.goto('/');
  const other = await page.context().newPage();
  await other.goto('/connections');
  await other.getByTestId('sign-out').click();
  await expect(other).toHaveURL(/\/login$/);
  await expect(page).toHaveURL(new RegExp(`/login\\?next=${encodeURIComponent(sessionPath)}$`));
  await expect(lists).toHaveURL(/\/login\?next=%2F$/);
});
