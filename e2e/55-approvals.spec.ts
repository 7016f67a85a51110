// A permission prompt, as the owner meets it in Chromium: the hook's
// approval (POST /agent/approvals, as `osfoundry agent hook` sends it)
// shows on the session page within its 2 s refresh, with a desktop
// notification while the tab is hidden; Allow answers the hook's waiting
// long poll; in the inbox it waits first under "Needs you", and Deny with a
// reason sends the reason.
import { test, expect, type Page } from '@playwright/test';
import { signIn, mintToken, callTool, toolJSON, expectAccessible, baseURL } from './helpers';

const project = 'Approvals E2E';
const title = 'Orders total';
let token = '';

async function tool(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await callTool(token, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return toolJSON(r);
}

async function agent(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${baseURL}${path}`, {
    method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => h });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
}

test.describe.configure({ mode: 'serial' });

test('an approval shows on the session page, notifies, and Allow answers the waiting hook; Deny with a reason from the inbox', async ({ page, context }) => {
  await page.addInitScript(() => {
    const shown: any[] = ((window as any).__notifications = []);
    class Recorded {
      constructor(title: string, opts: any) { shown.push({ title, body: opts?.body }); }
      static get permission() { return 'granted'; }
      static requestPermission() { return Promise.resolve('granted'); }
      close() {}
    }
    (window as any).Notification = Recorded;
  });
  await context.grantPermissions(['notifications'], { origin: baseURL });
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  ({ token } = mintToken({ client: 'Approval agent', projects: [project] }));
  await tool('claim_connected_profile', { handle: 'ada-prompter', display_name: 'Ada' });
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill(title);
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText(title);
  const sessionPath = new URL(page.url()).pathname;
  const publicId = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Ada (@ada-prompter)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@ada-prompter');
  await tool('post_session_note', { session_type: 'team_session', session_id: publicId, subject: 'On it', body: 'Working.', idempotency_key: 'a-1' });

  await page.goto(sessionPath);
  const toggle = page.getByTestId('notify-toggle');
  if ((await toggle.textContent())?.includes('off')) await toggle.click();
  await expect(toggle).toHaveText('Desktop notifications: on');
  await setHidden(page, true);

  const created = await agent('POST', '/agent/approvals', { tool: 'Bash', summary: 'npm publish', repo: 'acme/shop', branch: 'fix/orders-total' });
  expect(created.status).toBe(201);
  const box = page.locator(`#approval-${created.json.id}`);
  await expect(box).toHaveAttribute('data-state', 'pending');
  await expect(box.getByTestId('approval-summary')).toHaveText('npm publish');
  await expect.poll(() => page.evaluate(() => (window as any).__notifications)).toEqual([
    { title: '@ada-prompter asks to run `npm publish` in acme/shop fix/orders-total', body: 'Allow or deny it in osFoundry.' },
  ]);
  await setHidden(page, false);
  await expectAccessible(page);

  const waiting = agent('GET', `/agent/approvals/${created.json.id}?wait=30`);
  await box.getByTestId('approval-allow').click();
  const decided = await waiting;
  expect(decided.json).toMatchObject({ state: 'allowed', decided_by: 'Olivia Owner' });
  await expect(box).toHaveAttribute('data-state', 'allowed');
  await expect(box.getByTestId('approval-decided-by')).toHaveText('Olivia Owner');
  await expect(box.locator('form')).toHaveCount(0);

  // The inbox: first under Needs you; Deny with a reason.
  const second = await agent('POST', '/agent/approvals', { tool: 'Bash', summary: 'git push --force' });
  await page.goto('/inbox');
  const row = page.locator(`#approvals #approval-${second.json.id}`);
  await expect(row).toHaveAttribute('data-state', 'pending');
  await expect(row.getByTestId('approval-session')).toContainText(title);
  await row.getByTestId('approval-reason').fill('Not on main');
  await row.getByTestId('approval-deny').click();
  await expect(page.locator(`#approval-${second.json.id}`)).toHaveAttribute('data-state', 'denied');
  const denied = await agent('GET', `/agent/approvals/${second.json.id}?wait=0`);
  expect(denied.json).toMatchObject({ state: 'denied', reason: 'Not on main' });
});
