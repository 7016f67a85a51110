// Teams, as an admin and an invitee meet them: the People page invites an
// email as a member, the invitation arrives through a real SMTP server
// (mailpit, read through its API), its link opens in a browser that is not
// signed in, the invitee chooses a name and password and is signed in as a
// member, who is offered no admin pages; the used link says so; the audit
// log shows the invitation and the joining.
import { test, expect, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { signIn, expectAccessible, owner, mailpitURL } from './helpers';

/** The text of the newest mailpit message to this address, once it arrived. */
async function mailTo(address: string): Promise<{ Subject: string; Text: string }> {
  let id = '';
  await expect.poll(async () => {
    const list = await (await fetch(`${mailpitURL}/api/v1/messages?limit=100`)).json();
    id = list.messages.find((m: any) => m.To?.some((t: any) => t.Address === address))?.ID ?? '';
    return id;
  }, { timeout: 30_000, message: `a mail to ${address}` }).not.toBe('');
  const m = await (await fetch(`${mailpitURL}/api/v1/message/${id}`)).json();
  return { Subject: m.Subject, Text: m.Text.replace(/\r\n/g, '\n') };
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

test('an invited person joins as a member from the mailed link', async ({ page, browser }, testInfo) => {
  test.setTimeout(180_000);
  await signIn(page);
  await page.getByTestId('nav-people').click();
  await expect(page.getByRole('heading', { name: 'People', level: 1 })).toBeVisible();
  await expect(page.getByTestId('person')).toContainText([owner.name]);
  await page.getByLabel('Email').fill('mia@example.com');
  await page.getByLabel('Role', { exact: true }).selectOption('member');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  const shown = await page.getByTestId('invite-link').inputValue();
  expect(shown).toContain('/join/');
  await expect(page.getByTestId('invite')).toContainText('mia@example.com');
  await expectAccessible(page);

  const mail = await mailTo('mia@example.com');
  expect(mail.Subject).toBe(`Join ${owner.workspace} on osFoundry`);
  const link = mail.Text.match(/https?:\/\/\S+\/join\/\S+/)?.[0];
  expect(link, mail.Text).toBe(shown);

  // The invitee, in a browser of their own.
  const ctx = await browser.newContext();
  const mia = await ctx.newPage();
  await mia.goto(link!);
  await expect(mia.getByTestId('join-role')).toHaveText('member');
  await mia.getByLabel('Your name').fill('Mia Member');
  await mia.getByLabel('Password').fill('another long password');
  await mia.getByRole('button', { name: 'Join' }).click();
  await expect(mia.getByTestId('signed-in-as')).toHaveText('Mia Member');
  await expect(mia.getByTestId('nav-people')).toHaveCount(0);
  await expect(mia.getByTestId('nav-audit')).toHaveCount(0);
  await expect(mia.locator('body')).toHaveAttribute('data-role', 'member');
  // The link worked once.
  const again = await ctx.newPage();
  await ctx.clearCookies();
  await again.goto(link!);
  await expect(again.getByTestId('join-error')).toContainText('used already');
  await ctx.close();

  // The admin sees Mia among the people, and the audit log has it all.
  await page.goto('/people');
  await expect(page.locator('[data-testid="person"][data-email="mia@example.com"]')).toContainText('Mia Member');
  await page.getByLabel('Email').fill('vic@example.com');
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await expect(page.getByTestId('invite')).toContainText('vic@example.com');
  await expectAccessible(page);
  await screenshots(page, 'people', (p) => testInfo.outputPath(p));
  await page.getByTestId('nav-audit').click();
  await expect(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  await expect(page.locator('[data-testid="audit-row"][data-kind="person.joined"]')).toContainText('Mia Member');
  await expect(page.locator('[data-testid="audit-row"][data-kind="person.invited"]')).toHaveCount(2);
  await page.getByLabel('Kind').selectOption('person.joined');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByTestId('audit-row')).toHaveCount(1);
  await page.goto('/audit');
  await expectAccessible(page);
  await screenshots(page, 'audit', (p) => testInfo.outputPath(p));
});
