// An agent's question, as the owner meets it in Chromium: it arrives live
// on the session page with its options as buttons (and a desktop
// notification naming the session and the question while the tab is
// hidden), one click answers it and the agent's waiting ask_owner call gets
// the answer; in the inbox it waits at the top, live, and is answered there
// too. UPDATE_DOCS_SCREENSHOT=1 refreshes the pictures docs/ shows.
import { test, expect, type Page } from '@playwright/test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { signIn, mintToken, callTool, toolJSON, expectAccessible, baseURL } from './helpers';

const project = 'Questions E2E';
const title = 'Checkout redesign';
let sessionPath = '';
let publicId = '';
let token = '';

async function tool(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await callTool(token, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return toolJSON(r);
}

function ask(key: string, question: string, extra: Record<string, unknown> = {}): Promise<any> {
  return tool('ask_owner', { session_type: 'team_session', session_id: publicId, question, idempotency_key: key, ...extra });
}

async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => h });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (h ? 'hidden' : 'visible') });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
}

async function shot(page: Page, name: string, shots: string): Promise<void> {
  const png = await page.screenshot();
  writeFileSync(`${shots}/${name}`, png);
  if (process.env.UPDATE_DOCS_SCREENSHOT) writeFileSync(`docs/${name}`, png);
}

test.describe.configure({ mode: 'serial' });

test('a question arrives live on the session page, notifies, and one click answers the waiting agent', async ({ page, context }, testInfo) => {
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
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
  ({ token } = mintToken({ client: 'Question agent', projects: [project] }));
  await tool('claim_connected_profile', { handle: 'ask-bot', display_name: 'Ask Bot' });
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill(title);
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText(title);
  sessionPath = new URL(page.url()).pathname;
  publicId = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Ask Bot (@ask-bot)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@ask-bot');

  await page.goto(sessionPath);
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream-state', 'up');
  const toggle = page.getByTestId('notify-toggle');
  if ((await toggle.textContent())?.includes('off')) await toggle.click();
  await expect(toggle).toHaveText('Desktop notifications: on');
  await setHidden(page, true);

  // The agent waits for the answer while the owner reads the question.
  const question = 'Ship the new checkout behind a flag, or wait for the payment team?';
  const waiting = ask('e2e-q-1', question, { options: ['Ship behind a flag', 'Wait for payments'], urgency: 'blocking', wait_seconds: 60 });
  const box = page.getByTestId('question-box');
  await expect(box).toHaveAttribute('data-state', 'open');
  await expect(box.getByTestId('question-urgency')).toHaveText('blocking');
  await expect(box.getByTestId('question-option')).toHaveText(['Ship behind a flag', 'Wait for payments']);
  await expect(box.getByTestId('question-answer-text')).toBeVisible();
  await expect.poll(() => page.evaluate(() => (window as any).__notifications)).toEqual([
    { title: `Ask Bot (outside assistant) asks you in ${title}`, body: question },
  ]);
  await setHidden(page, false);
  const row = page.locator('[data-testid="note"]', { has: box });
  await row.scrollIntoViewIfNeeded();
  await expectAccessible(page);
  await shot(page, 'screenshot-question.png', shots);

  const clicked = Date.now();
  await box.getByRole('button', { name: 'Ship behind a flag' }).click();
  const answer = await waiting;
  const took = Date.now() - clicked;
  expect(answer).toMatchObject({ status: 'answered', answer: 'Ship behind a flag', answered_by: 'Olivia Owner' });
  console.log(`click → the waiting ask_owner's answer in Chromium: ${took} ms`);
  const answered = page.locator(`#question-${answer.question_id}`);
  await expect(answered).toHaveAttribute('data-state', 'answered');
  await expect(answered.getByTestId('question-answered-by')).toHaveText('Olivia Owner');
  await expect(answered.getByTestId('question-answer')).toHaveText('Ship behind a flag');
  await expect(answered.locator('form')).toHaveCount(0);
  // The answer is a reply to the question, shown live above it.
  const reply = page.getByTestId('note').first();
  await expect(reply).toContainText('Ship behind a flag');
  await expect(reply.getByTestId('note-parent')).toBeVisible();
  await shot(page, 'screenshot-question-answered.png', shots);

  // After a reload the box still says who answered.
  await page.reload();
  await expect(page.locator(`#question-${answer.question_id}`)).toHaveAttribute('data-state', 'answered');
});

test('a question waits at the top of the inbox, arrives there live, and is answered there', async ({ page }, testInfo) => {
  expect(sessionPath, 'the session made by the first test of this file').not.toBe('');
  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  await signIn(page);
  await page.goto('/inbox');
  await expect(page.getByTestId('inbox-questions')).toBeHidden();
  // Asked before or after the unread stream connects, the page hears of it:
  // the stream's first event names the newest inbox note.

  const asked = await ask('e2e-q-2', 'Which port should the preview server use?');
  const waiting = page.getByTestId('inbox-questions');
  await expect(waiting).toBeVisible();
  await expect(waiting.getByTestId('inbox-questions-count')).toHaveText('1');
  const box = waiting.getByTestId('question-box');
  await expect(box).toHaveAttribute('data-state', 'open');
  await expect(box.getByTestId('question-option')).toHaveCount(0);
  await expect(page.getByTestId('nav-inbox')).toBeVisible();
  await expectAccessible(page);
  await shot(page, 'screenshot-question-inbox.png', shots);

  await box.getByTestId('question-answer-text').fill('8080, as in production');
  await box.getByTestId('question-answer-send').click();
  const answered = page.locator(`#question-${asked.question_id}`);
  await expect(answered).toHaveAttribute('data-state', 'answered');
  await expect(answered.getByTestId('question-answer')).toHaveText('8080, as in production');
  // The agent's retry hears the answer.
  expect(await ask('e2e-q-2', 'Which port should the preview server use?')).toMatchObject({ status: 'answered', answer: '8080, as in production' });

  // Nothing waits any more.
  await page.goto('/inbox?show=questions');
  await expect(page.getByTestId('inbox-empty')).toBeVisible();
});
