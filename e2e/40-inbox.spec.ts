// The owner's inbox, as a person uses it in Chromium: agents post Markdown
// over MCP and the page renders it safely; replies form threads; the inbox
// and its count in the navigation follow live; search finds a note by a
// word of its body and by its sender; the keyboard does what "?" says; and
// every page fits a 390 px phone, light and dark.
import { test, expect, type Page } from '@playwright/test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { signIn, mintToken, callTool, toolJSON, expectAccessible } from './helpers';

const project = 'Inbox E2E';
const markdown = [
  '## Plan for `orders_total`',
  '',
  'Rounding is **wrong** for ~~some~~ all refunds; see https://example.com/issue/42 and [the docs](https://example.com/docs).',
  '',
  '- [x] reproduce',
  '- [ ] fix the rounding in `round_half_even()`',
  '',
  '| case | before | after |',
  '|:--|--:|--:|',
  '| 0.125 | 0.13 | 0.12 |',
  '',
  '```go',
  'func total(items []Item) Money { return sum(items).RoundHalfEven(2) + thisLineIsLongEnoughToScrollSideways() + andLongerStill() }',
  '```',
  '',
  '> Vec<String> stays text, and so does <b>this</b>.',
  '',
  '![chart](https://evil.example/pixel.png)',
].join('\n');

const hostile = [
  '<script>window.__pwned = "script"</script>',
  '<img src=x onerror="window.__pwned=\'img\'">',
  '[click me](javascript:window.__pwned="link")',
  '<svg onload="window.__pwned=\'svg\'"></svg>',
  '[<img src=x onerror="window.__pwned=\'nested\'">](https://example.com)',
  '<details open ontoggle="window.__pwned=\'details\'"><summary>x</summary></details>',
  '`'.repeat(10000).slice(0, 9000),
].join('\n\n');

let sessionPath = '';
let publicId = '';
let secondPath = '';
let secondId = '';
let token = '';
let slug = '';

async function tool(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await callTool(token, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return toolJSON(r);
}

let keys = 0;
function post(session: string, subject: string, body: string): Promise<any> {
  return tool('post_session_note', { session_type: 'team_session', session_id: session, subject, body, idempotency_key: `inbox-e2e-${++keys}` });
}

async function newSession(page: Page, title: string): Promise<[string, string]> {
  await page.goto('/');
  await page.getByTestId('project-item').filter({ hasText: project }).getByTestId('project-link').click();
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill(title);
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText(title);
  const path = new URL(page.url()).pathname;
  const id = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Inbox Bot (@inbox-bot)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@inbox-bot');
  return [path, id];
}

async function streamUp(page: Page): Promise<void> {
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream-state', 'up');
}

test.describe.configure({ mode: 'serial' });

test('Markdown from an agent renders, and nothing it writes runs or loads', async ({ page }, testInfo) => {
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  ({ token } = mintToken({ client: 'Inbox agent', projects: [project] }));
  slug = (await tool('claim_connected_profile', { handle: 'inbox-bot', display_name: 'Inbox Bot' })).sender_slug;
  [sessionPath, publicId] = await newSession(page, 'Refund rounding');
  [secondPath, secondId] = await newSession(page, 'Release checklist');

  const remote: string[] = [];
  page.on('request', (r) => { if (!r.url().startsWith(new URL(page.url()).origin)) remote.push(r.url()); });
  await page.goto(sessionPath);
  await streamUp(page);
  const note = await post(publicId, 'Rounding plan', markdown);
  const row = page.locator(`#note-${note.id}`);
  await expect(row).toBeVisible();
  // Long: collapsed behind "Show more", rendered whole inside.
  await row.getByText('Show more').click();
  const body = row.getByTestId('note-body').locator('.full');
  await expect(body.locator('h2')).toHaveText('Plan for orders_total');
  await expect(body.locator('strong')).toHaveText('wrong');
  await expect(body.locator('del')).toHaveText('some');
  await expect(body.locator('input[type=checkbox]')).toHaveCount(2);
  await expect(body.locator('input[type=checkbox]').first()).toBeChecked();
  await expect(body.locator('table td').first()).toHaveText('0.125');
  await expect(body.locator('code.language-go')).toHaveCount(1);
  const pre = body.locator('pre');
  expect(await pre.evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(/mono|Menlo|Consolas/i);
  expect(await pre.evaluate((el) => getComputedStyle(el).overflowX)).toBe('auto');
  expect(await pre.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  for (const a of await body.locator('a').all()) {
    await expect(a).toHaveAttribute('rel', 'nofollow noopener noreferrer');
    expect(await a.getAttribute('href')).toMatch(/^https:\/\//);
  }
  await expect(body.locator('a', { hasText: 'https://example.com/issue/42' })).toHaveCount(1);
  await expect(body.locator('img')).toHaveCount(0);
  await expect(body.locator('a.md-image')).toHaveText('image: chart');
  await expect(body.locator('blockquote')).toHaveText('Vec<String> stays text, and so does <b>this</b>.');
  expect(remote, 'nothing is loaded from elsewhere').toEqual([]);
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await row.screenshot({ path: `${shots}/markdown-row.png` });

  // Hostile Markdown, over the stream and after a reload: nothing runs.
  const bad = await post(publicId, 'Hostile', hostile);
  const badRow = page.locator(`#note-${bad.id}`);
  await expect(badRow).toBeVisible();
  await expect(badRow.getByTestId('note-body')).toContainText('<script>window.__pwned = "script"</script>');
  await expect(badRow.locator('.md script, .md img, .md svg, .md details, .md iframe')).toHaveCount(0);
  await badRow.getByText('click me').click().catch(() => {});
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  await page.reload();
  await expect(page.locator(`#note-${bad.id}`)).toBeVisible();
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  await row.scrollIntoViewIfNeeded();
  await expectAccessible(page);
});

test('threads: Reply on every note, the parent quoted, N replies, a live thread page', async ({ page }, testInfo) => {
  expect(sessionPath, 'the session of the first test').not.toBe('');
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  const asked = await post(publicId, 'Which rounding?', 'Half-even or half-up?');
  const root = page.locator(`#note-${asked.id}`);
  await expect(root).toBeVisible();

  // The owner replies to the agent's note.
  await root.getByTestId('reply-button').click();
  const composer = page.getByTestId('reply-composer');
  await expect(composer.getByTestId('composer-to')).toHaveText(slug);
  await composer.getByLabel('Message').fill('Half-even, as the ledger does.');
  await composer.getByRole('button', { name: 'Send reply' }).click();
  const reply = page.getByTestId('note').filter({ hasText: 'Half-even, as the ledger does.' });
  await expect(reply).toHaveCount(1);
  await expect(reply.getByTestId('note-parent')).toContainText('Inbox Bot');
  await expect(reply.getByTestId('note-parent-line')).toHaveText('Which rounding?');
  await expect(reply.getByTestId('reply-button')).toHaveCount(1);
  await expect(root.getByTestId('note-replies')).toHaveText('1 reply');
  const replyId = Number(await reply.getAttribute('data-note-id'));

  // The agent answers the reply; the count follows live.
  const mail = await tool('read_session_mail', { session_type: 'team_session', session_id: publicId, limit: 5 });
  const got = mail.notes.find((n: any) => n.id === replyId);
  expect(got.in_reply_to).toBe(asked.id);
  const answer = await tool('reply_to_sender', { session_type: 'team_session', session_id: publicId, to: got.from,
    in_reply_to: replyId, subject: 'Re: Which rounding?', body: 'Done: **half-even** everywhere.', idempotency_key: 'inbox-e2e-answer' });
  await expect(page.locator(`#note-${answer.id}`).getByTestId('note-parent')).toContainText('Olivia Owner');
  await expect(root.getByTestId('note-replies')).toHaveText('2 replies');

  // The thread page: oldest first, and live.
  await root.getByTestId('note-replies').click();
  await expect(page).toHaveURL(new RegExp(`${sessionPath}/notes/${asked.id}$`));
  await streamUp(page);
  const ids = () => page.getByTestId('note').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-note-id'))));
  expect(await ids()).toEqual([asked.id, replyId, answer.id]);
  const more = await tool('reply_to_sender', { session_type: 'team_session', session_id: publicId, to: got.from,
    in_reply_to: answer.id, subject: 'Re', body: 'Also the CSV export.', idempotency_key: 'inbox-e2e-more' });
  await post(publicId, 'Unrelated', 'not in the thread');
  await expect(page.locator(`#note-${more.id}`)).toBeVisible();
  expect(await ids()).toEqual([asked.id, replyId, answer.id, more.id]);
  await page.getByTestId('thread-composer').getByLabel('Message').fill('Thanks, shipping it.');
  await page.getByTestId('thread-composer').getByRole('button', { name: 'Send reply' }).click();
  await expect(page.getByTestId('note').filter({ hasText: 'Thanks, shipping it.' })).toHaveCount(1);
  expect((await ids()).length).toBe(5);
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}/thread.png`, fullPage: true });
  await expectAccessible(page);
});

test('the inbox count goes live in the navigation, and the inbox fills without a reload', async ({ page }, testInfo) => {
  expect(sessionPath, 'the session of the first test').not.toBe('');
  await signIn(page);
  // Start from nothing unread.
  await page.goto('/inbox');
  await page.getByTestId('inbox-mark-read').getByRole('button').click();
  const count = page.getByTestId('nav-inbox-count');
  await expect(count).toBeHidden();

  // On the projects list, a note in any session counts.
  await page.goto('/');
  await expect(count).toBeHidden();
  await post(secondId, 'Checklist ready', 'All **green**.');
  await expect(count).toHaveText('1');
  // On a session page (its own stream carries the count).
  await page.goto(sessionPath);
  await streamUp(page);
  await post(secondId, 'Tagged', 'v2.3.1 is out');
  await expect(count).toHaveText('2');

  // The inbox: rows arrive live, unread in bold, each opening its note in place.
  await page.goto('/inbox');
  await expect(page.getByTestId('inbox-note')).not.toHaveCount(0);
  const live = await post(secondId, 'Live one', 'arrives without a reload');
  const row = page.locator(`#inbox-${live.id}`);
  await expect(row).toBeVisible();
  await expect(row).toHaveClass(/unread/);
  await expect(count).toHaveText('3');
  expect(await row.getByTestId('note-subject').evaluate((el) => Number(getComputedStyle(el).fontWeight))).toBeGreaterThanOrEqual(700);
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `${shots}/inbox-${scheme}.png` });
    if (scheme === 'light' && process.env.UPDATE_DOCS_SCREENSHOT) writeFileSync('docs/screenshot-inbox.png', await page.screenshot());
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await expectAccessible(page);

  // Views: replies to me, questions waiting (none yet), one project.
  await page.getByTestId('inbox-view-questions').click();
  await expect(page.getByTestId('inbox-empty')).toBeVisible();
  await page.getByTestId('inbox-view-all').click();
  await row.getByTestId('inbox-open').click();
  await expect(page).toHaveURL(new RegExp(`${secondPath}\\?note=${live.id}#note-${live.id}$`));
  const target = page.locator(`#note-${live.id}`);
  await expect(target).toBeFocused();
  expect(await target.evaluate((el) => el.matches(':target'))).toBe(true);
  await page.screenshot({ path: `${shots}/note-in-place.png` });
  // Opening it read the session: the count drops to the other session's.
  await expect(count).toBeHidden();
});

test('search finds a note by a word of its body and by its sender', async ({ page }, testInfo) => {
  expect(sessionPath, 'the session of the first test').not.toBe('');
  await signIn(page);
  await page.goto('/');
  await page.getByTestId('nav-search').fill('round_half_even');
  await page.getByTestId('nav-search').press('Enter');
  await expect(page).toHaveURL(/\/search\?q=round_half_even/);
  const result = page.getByTestId('search-result');
  await expect(result).toHaveCount(1);
  await expect(result.getByTestId('note-subject')).toHaveText('Rounding plan');
  // round_half_even is marked where it stands (and "Rounding", a form of round, too).
  await expect(result.getByTestId('search-snippet').locator('mark').filter({ hasText: /^round$/ }).first()).toBeVisible();
  await page.getByTestId('search-q').fill('from:inbox-bot half-even');
  await page.getByTestId('search-q').press('Enter');
  await expect(page.getByTestId('search-result')).not.toHaveCount(0);
  for (const r of await page.getByTestId('search-result').all()) await expect(r.getByTestId('note-sender-slug')).toHaveText(slug);
  await page.getByTestId('search-q').fill('from:me half-even');
  await page.getByTestId('search-q').press('Enter');
  await expect(page.getByTestId('search-result')).toHaveCount(1);
  await expect(page.getByTestId('search-result').getByTestId('note-sender-name')).toHaveText('Olivia Owner');
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await page.getByTestId('search-q').fill('half-even');
  await page.getByTestId('search-q').press('Enter');
  await page.screenshot({ path: `${shots}/search.png`, fullPage: true });
  await expectAccessible(page);
});

test('the keyboard: j/k, r, Ctrl+Enter, Esc, /, g i and ?', async ({ page }, testInfo) => {
  expect(sessionPath, 'the session of the first test').not.toBe('');
  await signIn(page);
  await page.goto(sessionPath);
  await streamUp(page);
  const rows = page.getByTestId('note');
  await page.keyboard.press('j');
  await expect(rows.nth(0)).toBeFocused();
  await page.keyboard.press('j');
  await expect(rows.nth(1)).toBeFocused();
  expect(await rows.nth(1).evaluate((el) => getComputedStyle(el).outlineStyle)).not.toBe('none');
  await page.keyboard.press('k');
  await expect(rows.nth(0)).toBeFocused();
  const first = Number(await rows.nth(0).getAttribute('data-note-id'));
  await page.keyboard.press('r');
  const composer = page.getByTestId('reply-composer');
  await expect(composer.getByLabel('Message')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(composer).toHaveCount(0);
  await expect(rows.nth(0)).toBeFocused();
  await page.keyboard.press('r');
  await expect(composer.getByLabel('Message')).toBeFocused();
  await page.keyboard.type('Sent from the keyboard.');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('note').filter({ hasText: 'Sent from the keyboard.' })).toHaveCount(1);
  await expect(page.getByTestId('note').filter({ hasText: 'Sent from the keyboard.' }).getByTestId('note-parent')).toHaveAttribute('data-parent-id', String(first));
  // The screen reader still hears new notes.
  await post(publicId, 'Heard', 'announced');
  await expect(page.getByTestId('mail-announce')).toHaveText(/New note from Inbox Bot: Heard/);

  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('?');
  const dialog = page.getByTestId('shortcuts');
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('g then i');
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}/shortcuts.png` });
  await expectAccessible(page);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await page.keyboard.press('/');
  await expect(page.getByTestId('nav-search')).toBeFocused();
  await page.keyboard.press('Escape');
  await page.keyboard.press('g');
  await page.keyboard.press('i');
  await expect(page).toHaveURL(/\/inbox$/);
  await page.keyboard.press('j');
  await expect(page.getByTestId('inbox-note').first()).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\?note=\d+#note-\d+$/);
});

test('every page fits a 390 px phone without sideways scrolling, light and dark', async ({ page }, testInfo) => {
  expect(sessionPath, 'the session of the first test').not.toBe('');
  test.setTimeout(120_000);
  await signIn(page);
  // A webhook endpoint that fails, so that its log has every column filled.
  await page.goto('/');
  await page.getByTestId('project-item').filter({ hasText: project }).getByTestId('project-link').click();
  const projectPath = new URL(page.url()).pathname;
  await page.getByTestId('project-webhooks').click();
  await page.getByRole('textbox', { name: 'URL' }).fill('http://127.0.0.1:9/a-rather-long-path/that/keeps/going/hooks');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const hookPath = new URL(page.url()).pathname;
  await page.getByTestId('webhook-send-test').click();
  await expect(page.getByTestId('delivery-response').first()).not.toBeEmpty({ timeout: 15_000 });
  const thread = await page.goto(sessionPath).then(() => page.getByTestId('note-replies').filter({ hasText: 'replies' }).first().getAttribute('href'));

  const pages: [string, string][] = [
    ['projects', '/'],
    ['project', projectPath],
    ['session', sessionPath],
    ['thread', thread!],
    ['participants', `${sessionPath}/participants`],
    ['inbox', '/inbox'],
    ['search', '/search?q=half-even'],
    ['connections', '/connections'],
    ['webhooks', `${projectPath}/webhooks`],
    ['webhook', hookPath],
    ['compose', `${sessionPath}/compose?reply_to=${await page.getByTestId('note').first().getAttribute('data-note-id')}`],
  ];
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const wide: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [name, path] of pages) {
      await page.goto(path);
      await page.waitForLoadState('networkidle').catch(() => {});
      const { scroll, view, culprit, hidden } = await page.evaluate(() => {
        const view = document.documentElement.clientWidth;
        let culprit = '';
        document.querySelectorAll('body *').forEach((el) => {
          const r = el.getBoundingClientRect();
          if (!culprit && r.right > view + 1 && getComputedStyle(el).position !== 'fixed') {
            culprit = `${el.tagName.toLowerCase()}.${el.className} (${Math.round(r.right)} px)`;
          }
        });
        // A table that would need its own sideways scroll hides columns.
        const hidden = Array.from(document.querySelectorAll('.table-wrap')).filter((el) => el.scrollWidth > el.clientWidth + 1).length;
        return { scroll: document.documentElement.scrollWidth, view, culprit, hidden };
      });
      if (scroll > view) wide.push(`${name} (${scheme}): ${scroll} px > ${view} px, first past the edge: ${culprit}`);
      if (hidden) wide.push(`${name} (${scheme}): ${hidden} table(s) scroll sideways`);
      await page.screenshot({ path: `${shots}/phone-${name}-${scheme}.png`, fullPage: true });
    }
  }
  expect(wide, wide.join('\n')).toEqual([]);
  // The session page, for the README.
  await page.emulateMedia({ colorScheme: 'light' });
  if (process.env.UPDATE_DOCS_SCREENSHOT) {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(sessionPath);
    await streamUp(page);
    const shown = await post(publicId, 'Refunds round half-even now', [
      'Fixed in `orders_total`; see [PR 42](https://example.com/pr/42).',
      '',
      '| case | before | after |',
      '|:--|--:|--:|',
      '| 0.125 | 0.13 | 0.12 |',
      '',
      '```go',
      'return sum(items).RoundHalfEven(2)',
      '```',
      '',
      '- [x] tests',
      '- [ ] release notes',
    ].join('\n'));
    await expect(page.locator(`#note-${shown.id}`)).toBeVisible();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    writeFileSync('docs/screenshot-session.png', await page.screenshot());
  }
});
