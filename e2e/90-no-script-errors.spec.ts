// No page throws: every page of the app an owner reaches by its links (the
// pages the other specs visit, with what they left behind), a live update
// on a session page, an unknown URL, light and dark, on a desktop and a
// phone, without one page error or console error.
import { test, expect, type Page } from '@playwright/test';
import { signIn, mintToken, callTool, toolJSON } from './helpers';

const project = 'Script errors E2E';

/** Collects the page's errors and console errors from now on. */
function watch(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`${page.url()}: page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`${page.url()}: console error: ${m.text()}`); });
  return errors;
}

/** Same-origin pages linked from the current page, as paths. */
async function links(page: Page): Promise<string[]> {
  const origin = new URL(page.url()).origin;
  const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
  return hrefs.filter((h) => h.startsWith(origin)).map((h) => { const u = new URL(h); return u.pathname + u.search; });
}

// One route's pages are alike: at most a few of each are visited.
const shape = (path: string) => path.replace(/\?.*$/, '').replace(/\/\d+/g, '/:id');
// A page's screenshot name: its path as a file name.
const shot = (path: string) => path.replace(/[^a-z0-9]+/gi, '-');
const skipped = /^\/(logout|static\/|answer\/|approve\/|join\/)|\/export\.(md|json)$|\.jsonl(\?|$)/;

test('no page error and no console error on any page', async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const errors = watch(page);
  await signIn(page);

  // A session with an agent that writes while the page is open: the live
  // update swaps rows in through the stream.
  await page.goto('/');
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  const { token } = mintToken({ client: 'Script errors agent', projects: [project] });
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = await callTool(token, name, args);
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    return toolJSON(r);
  };
  await tool('claim_connected_profile', { handle: 'script-bot', display_name: 'Script Bot' });
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill('Live without errors');
  await page.getByRole('button', { name: 'Create session' }).click();
  const sessionPath = new URL(page.url()).pathname;
  const publicId = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Script Bot (@script-bot)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.goto(sessionPath);
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream-state', 'up');
  const live = await tool('post_session_note', { session_type: 'team_session', session_id: publicId, subject: 'Live',
    body: 'Arrives over the stream.', idempotency_key: 'script-errors-1' });
  await expect(page.locator(`#note-${live.id}`)).toBeVisible();
  await page.locator(`#note-${live.id}`).getByTestId('reply-button').click();
  await expect(page.getByTestId('reply-composer')).toBeVisible();
  await page.keyboard.press('Escape');

  // Every page its links reach, a few of each route.
  const seen = new Set<string>();
  const perShape = new Map<string, number>();
  const queue = ['/', '/inbox', '/search?q=live', '/connections', '/account', sessionPath];
  const visited: string[] = [];
  while (queue.length > 0 && visited.length < 60) {
    const path = queue.shift()!;
    if (seen.has(path) || skipped.test(path)) continue;
    seen.add(path);
    const n = perShape.get(shape(path)) ?? 0;
    if (n >= 3) continue;
    perShape.set(shape(path), n + 1);
    const res = await page.goto(path);
    expect(res?.status(), path).toBeLessThan(400);
    visited.push(path);
    await page.screenshot({ path: testInfo.outputPath(`desktop-light${shot(path)}.png`), fullPage: true });
    for (const l of await links(page)) if (!seen.has(l)) queue.push(l);
  }
  // The same pages' first screens on a phone, dark.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const path of visited.slice(0, 20)) {
    await page.goto(path);
    await page.screenshot({ path: testInfo.outputPath(`phone-dark${shot(path)}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 720 });

  // An unknown URL is the app's 404 page (its status is the one console
  // line a 404 page brings, so it is left out).
  const before = errors.length;
  const res = await page.goto('/nope');
  expect(res?.status()).toBe(404);
  await expect(page.getByTestId('error-page')).toBeVisible();
  await expect(page.getByTestId('signed-in-as')).toBeVisible();
  errors.splice(before, errors.length - before, ...errors.slice(before).filter((e) => !/status of 404/.test(e)));

  console.log(`visited ${visited.length} pages: ${visited.join(' ')}`);
  expect(visited.length).toBeGreaterThan(8);
  expect(errors, errors.join('\n')).toEqual([]);
});
