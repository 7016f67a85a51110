// Email, as an owner meets it, through a real SMTP server (mailpit, read
// through its API): the account page chooses what mails the owner; a
// question an agent asked reaches the mailbox once nobody answered on the
// page within the project's delay; its link opens a page in a browser that
// is not signed in, which answers only on its one button; the agent gets the
// answer; and the link, used again, says who answered what.
import { test, expect, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { signIn, mintToken, callTool, toolJSON, expectAccessible, sql, owner, mailpitURL } from './helpers';

const project = 'Email E2E';

/** The message of mailpit with this subject, in full (its text with \n line ends), once it arrived. */
async function mailWithSubject(subject: string): Promise<any> {
  let id = '';
  await expect.poll(async () => {
    const list = await (await fetch(`${mailpitURL}/api/v1/messages?limit=100`)).json();
    id = list.messages.find((m: any) => m.Subject === subject)?.ID ?? '';
    return id;
  }, { timeout: 30_000, message: `a mail "${subject}"` }).not.toBe('');
  const m = await (await fetch(`${mailpitURL}/api/v1/message/${id}`)).json();
  return { ...m, Text: m.Text.replace(/\r\n/g, '\n') };
}

/** Saves desktop and phone screenshots of the page under the test's output. */
async function screenshots(page: Page, name: string, outputPath: (p: string) => string): Promise<void> {
  const dir = outputPath('screenshots');
  mkdirSync(dir, { recursive: true });
  for (const [size, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${dir}/${name}-${size}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test.describe.configure({ mode: 'serial' });

test('the account page chooses what mails the owner', async ({ page }, testInfo) => {
  await signIn(page);
  await page.goto('/account');
  const form = page.getByTestId('mail-settings');
  await expect(form.getByRole('heading', { name: 'Email' })).toBeVisible();
  await expect(page.getByTestId('email-off')).toHaveCount(0);
  await expect(page.getByLabel('Questions agents ask me')).toBeChecked();
  await expect(page.getByTestId('mail-replies')).not.toBeChecked();
  await expect(page.getByLabel("A daily digest of unread agents' notes")).not.toBeChecked();
  await page.getByTestId('mail-replies').check();
  await page.getByRole('button', { name: 'Save mail settings' }).click();
  await expect(page.getByTestId('account-notice')).toHaveText('Your mail settings are saved.');
  await expect(page.getByTestId('mail-replies')).toBeChecked();
  await expect(page.getByLabel('Questions agents ask me')).toBeChecked();
  await expectAccessible(page);
  await screenshots(page, 'account-email', (p) => testInfo.outputPath(p));
});

test('a mailed question is answered from its link after one click, once', async ({ page, browser }, testInfo) => {
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  // The owners are reached off the page at once (a delay of 0 minutes).
  sql(`UPDATE projects SET question_normal_minutes = 0 WHERE name = '${project}'`);
  const { token } = mintToken({ client: 'Email agent', projects: [project] });
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = await callTool(token, name, args);
    expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
    return toolJSON(r);
  };
  await tool('claim_connected_profile', { handle: 'mail-bot', display_name: 'Mail Bot' });
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill('Refund fix');
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText('Refund fix');
  const sessionPath = new URL(page.url()).pathname;
  const sessionId = (await page.getByTestId('session-public-id').textContent())!.trim();
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Mail Bot (@mail-bot)' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@mail-bot');

  const asked = await tool('ask_owner', { session_type: 'team_session', session_id: sessionId,
    question: 'Ship the refund fix to production today?', options: ['Ship it', 'Hold until Monday'], idempotency_key: 'email-e2e-1' });
  expect(asked.status).toBe('open');

  const mail = await mailWithSubject('Question from Mail Bot: Ship the refund fix to production today?');
  expect(mail.To.map((a: any) => a.Address)).toEqual([owner.email]);
  expect(mail.From.Address).toBe('osfoundry@example.com');
  const links: string[] = mail.Text.match(/http:\/\/127\.0\.0\.1:\d+\/answer\/[0-9]+\.[A-Za-z0-9_-]+/g) ?? [];
  expect(links, mail.Text).toHaveLength(3);
  expect(mail.Text).toContain('- "Ship it"\n');
  expect(mail.Text).toContain(`${sessionPath}?note=${asked.question_id}`);
  expect(mail.HTML).toContain('>Ship it</a>');

  // The mail as a mail app shows it, on a phone with no sign-in: its link
  // to "Ship it" opens the confirmation page.
  const phone = await browser.newContext();
  const there = await phone.newPage();
  await there.setViewportSize({ width: 390, height: 844 });
  await there.goto(`${mailpitURL}/view/${mail.ID}.html`);
  await screenshots(there, 'question-mail', (p) => testInfo.outputPath(p));
  const [res] = await Promise.all([
    there.waitForResponse((r) => r.url() === links[0]),
    there.getByRole('link', { name: 'Ship it' }).click(),
  ]);
  expect(res.status()).toBe(200);
  await expect(there).toHaveURL(links[0]);
  await expect(there.getByTestId('answer-link-question')).toHaveText('Ship the refund fix to production today?');
  await expect(there.getByTestId('answer-link-option')).toHaveText('Ship it');
  // Opening the page answered nothing.
  expect(sql(`SELECT state FROM questions WHERE note_id = ${asked.question_id}`)).toBe('open');
  await expectAccessible(there);
  await screenshots(there, 'answer-link-confirm', (p) => testInfo.outputPath(p));
  await there.getByRole('button', { name: 'Answer “Ship it”' }).click();
  await expect(there.getByTestId('answer-link-done')).toContainText('You answered Ship it');

  // The agent has the answer, from the owner the link was mailed to.
  const mailbox = await tool('read_session_mail', { session_type: 'team_session', session_id: sessionId });
  const question = mailbox.notes.find((n: any) => n.id === asked.question_id);
  expect(question).toMatchObject({ status: 'answered', answer: 'Ship it', answered_by: owner.name });
  // The session page shows it answered.
  await page.goto(sessionPath);
  await expect(page.locator(`#question-${asked.question_id}`)).toHaveAttribute('data-state', 'answered');

  // The same link again, and the other option's: told who answered what.
  for (const [link, text] of [[links[0], 'This link was used already.'], [links[1], `${owner.name} answered this question already: Ship it`]]) {
    const again = await there.goto(link);
    expect(again?.status()).toBe(409);
    await expect(there.getByTestId('answer-link-notice')).toContainText(text);
    await expect(there.getByTestId('answer-link-confirm')).toHaveCount(0);
  }
  await phone.close();
});
