import { mkdirSync } from 'node:fs';
import { test, expect, type Page } from '@playwright/test';
import { owner, signIn, expectAccessible } from './helpers';

const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/** Changes the owner's password on the account page. */
async function changePassword(page: Page, current: string, next: string): Promise<void> {
  await page.goto('/account');
  await page.getByLabel('Current password').fill(current);
  await page.getByLabel('New password').fill(next);
  await page.getByRole('button', { name: 'Change password' }).click();
}

test('the account page lists sign-ins, signs out the others and changes the password', async ({ page, browser }, testInfo) => {
  await signIn(page);
  await page.getByTestId('signed-in-as').click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByRole('heading', { name: 'Account', exact: true })).toBeVisible();
  // Earlier tests left sign-ins of their own: end them, so that this one is alone.
  const others = page.getByTestId('sign-out-others');
  if (await others.count()) await others.click();
  await expect(page.getByTestId('sign-in')).toHaveCount(1);

  // A second browser signs in: both are listed, this one marked.
  const second = await browser.newContext({ userAgent: firefox });
  const there = await second.newPage();
  await signIn(there);
  await page.goto('/account');
  await expect(page.getByTestId('sign-in')).toHaveCount(2);
  await expect(page.getByTestId('sign-in-current')).toHaveCount(1);
  await expect(page.getByTestId('sign-in-browser').filter({ hasText: 'Firefox on Linux' })).toHaveCount(1);
  await expectAccessible(page);

  const shots = testInfo.outputPath('screenshots');
  mkdirSync(shots, { recursive: true });
  for (const [name, width, height] of [['desktop', 1440, 900], ['phone', 390, 844]] as const) {
    await page.setViewportSize({ width, height });
    const file = `${shots}/account-${name}.png`;
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(`account-${name}`, { path: file, contentType: 'image/png' });
  }
  await page.setViewportSize({ width: 1440, height: 900 });

  // Sign out all others: the second browser is sent to sign in on its next page.
  await page.getByTestId('sign-out-others').click();
  await expect(page.getByTestId('account-notice')).toContainText('Every other sign-in was signed out');
  await expect(page.getByTestId('sign-in')).toHaveCount(1);
  await there.goto('/');
  await expect(there).toHaveURL(/\/login/);

  // The second browser signs in again; a password change ends it too.
  await signIn(there);
  await changePassword(page, 'not my password', 'short');
  await expect(page.getByTestId('error-current_password')).toContainText('not your current password');
  await expect(page.getByTestId('error-new_password')).toContainText('at least 10 characters');
  await expectAccessible(page);
  const changed = 'a brand new passphrase';
  await changePassword(page, owner.password, changed);
  await expect(page.getByTestId('account-notice')).toContainText('Your password is changed');
  await expect(page.getByTestId('signed-in-as')).toHaveText(owner.name);
  await there.goto('/');
  await expect(there).toHaveURL(/\/login/);
  await there.getByLabel('Email').fill(owner.email);
  await there.getByLabel('Password').fill(owner.password);
  await there.getByRole('button', { name: 'Sign in' }).click();
  await expect(there.getByTestId('login-error')).toBeVisible();
  await there.getByLabel('Password').fill(changed);
  await there.getByRole('button', { name: 'Sign in' }).click();
  await expect(there.getByTestId('signed-in-as')).toHaveText(owner.name);

  // Each row's own Sign out: the second browser, from here.
  await page.goto('/account');
  await page.getByTestId('sign-in').filter({ hasText: 'Firefox on Linux' }).getByTestId('sign-in-end').click();
  await expect(page.getByTestId('account-notice')).toContainText('That sign-in was signed out');
  await there.goto('/');
  await expect(there).toHaveURL(/\/login/);
  await second.close();

  // The specs after this one sign in with the usual password.
  await changePassword(page, changed, owner.password);
  await expect(page.getByTestId('account-notice')).toContainText('Your password is changed');
});
