// Agents hear back: the owner answers in the page, the agent's
// very next tool call (whatever it is) says mail is waiting, the agent reads
// it, and the owner's page shows who read the answer; the agent answers the
// owner with reply_to_sender.
import { test, expect } from '@playwright/test';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import { signIn, mintToken, callTool, toolJSON } from './helpers';

const project = 'Hear Back E2E';

test('the owner replies, the agent is told on its next call, reads, and the page shows it read', async ({ page }) => {
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill('Release notes');
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText('Release notes');
  const sessionPath = new URL(page.url()).pathname;
  const publicId = (await page.getByTestId('session-public-id').textContent())!.trim();
  const session = { session_type: 'team_session', session_id: publicId };

  const { token } = mintToken({ client: 'Hear Back agent', projects: [project] });
  const tool = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await callTool(token, name, args);
    expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
    return r;
  };
  const claimed = toolJSON(await tool('claim_connected_profile', { handle: 'hear-back', display_name: 'Hear Back Bot' }));

  // The owner invites it, and keeps the Team mail tab open.
  await page.getByTestId('tab-participants').click();
  await page.getByLabel('Agent or connection').selectOption({ label: 'Hear Back Bot (@hear-back)' });
  await page.getByLabel('Role').selectOption('contributor');
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByTestId('participant')).toContainText('@hear-back');
  await page.goto(sessionPath);

  // The agent asks; nothing is unread for it yet.
  const asked = toolJSON(await tool('post_session_note', { ...session, subject: 'Tag the release?', body: 'v1.4 or v2.0?', idempotency_key: 'hb-1' }));
  const quiet = await tool('set_status', { task: 'waiting for an answer' });
  expect(quiet.structuredContent.unread).toBeUndefined();
  expect(quiet.content).toHaveLength(1);

  // The owner answers in the page.
  const row = page.locator(`#note-${asked.id}`);
  await expect(row).toBeVisible({ timeout: 6_000 });
  await row.getByTestId('reply-button').click();
  const composer = page.getByTestId('reply-composer');
  await composer.getByLabel('Message').fill('v2.0: the API changed.');
  await composer.getByRole('button', { name: 'Send reply' }).click();
  const reply = page.getByTestId('note').filter({ hasText: 'v2.0: the API changed.' });
  await expect(reply).toHaveCount(1);
  const replyId = Number(await reply.getAttribute('data-note-id'));
  await expect(reply.getByTestId('note-receipts')).toBeEmpty();

  // The agent's next call, whatever it is, says so.
  const told = await tool('set_status', { task: 'tagging' });
  const sentence = `1 unread note for you: team_session ${publicId} (1). Read it with read_session_mail.`;
  expect(told.structuredContent.unread).toEqual({ total: 1, hint: sentence, sessions: [{ session_type: 'team_session', session_id: publicId, count: 1 }] });
  // The last text block starts on a line of its own: clients that join text blocks still show it apart.
  expect(told.content[told.content.length - 1].text).toBe(`\n${sentence}`);
  const line = sentence;
  expect(JSON.parse(told.content[0].text).task).toBe('tagging');
  const tokens = new Tiktoken(cl100k_base).encode(line).length;
  console.log(`unread hint line: ${tokens} cl100k tokens: ${line}`);
  expect(tokens).toBeLessThanOrEqual(40);

  // It reads: the reply comes back, and nothing is unread any more.
  const read = await tool('read_session_mail', session);
  const mail = toolJSON(read);
  expect(mail.notes[0].id).toBe(replyId);
  expect(mail.notes[0].to).toBe(claimed.sender_slug);
  expect(mail.unread).toBeUndefined();
  expect(toolJSON(await tool('list_sessions')).unread).toBeUndefined();

  // The owner's page shows who read the reply, without a reload.
  const receipt = reply.getByTestId('note-receipt');
  await expect(receipt).toHaveCount(1, { timeout: 8_000 });
  await expect(receipt).toHaveText(/^\s*read by\s+Hear Back Bot\s+·\s+just now\s*$/);

  // The agent answers the owner at the reply's sender slug.
  const answered = toolJSON(await tool('reply_to_sender', {
    ...session, to: mail.notes[0].from, subject: 'Re: Tag the release?', body: 'Tagged v2.0.', idempotency_key: 'hb-2',
  }));
  const answer = page.locator(`#note-${answered.id}`);
  await expect(answer).toBeVisible({ timeout: 6_000 });
  await expect(answer.getByTestId('note-type')).toHaveText('reply');
  await expect(answer.getByTestId('note-recipient')).toHaveText(mail.notes[0].from);
  await expect(answer.getByTestId('note-outside')).toHaveText('outside assistant');
  // Its own reply is never unread for it.
  expect(toolJSON(await tool('list_sessions')).unread).toBeUndefined();
});
