import { existsSync } from 'node:fs';
import { test, expect } from '@playwright/test';
import { owner, signIn, expectAccessible, dataDir } from './helpers';

test('a fresh install asks for the setup code and the first owner, then signs in and out', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole('heading', { name: 'Create the first owner account' })).toBeVisible();
  await expect(page.getByLabel('Setup code')).toBeVisible();
  await expectAccessible(page);

  // Every refused field at once, each next to its field, keeping what was
  // typed: a wrong setup code, a bad email, no name, a short password.
  await page.getByLabel('Setup code').fill('AAAA-BBBB-CCCC');
  await page.getByLabel('Email').fill('not an email');
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByTestId('error-setup_code')).toContainText('not the setup code');
  await expect(page.getByTestId('error-email')).toContainText('valid email');
  await expect(page.getByTestId('error-display_name')).toContainText('1 to 80');
  await expect(page.getByTestId('error-password')).toContainText('at least 10 characters');
  await expect(page.getByLabel('Email')).toHaveValue('not an email');
  await expectAccessible(page);

  await signIn(page);
  await expect(page.getByRole('heading', { name: 'Projects' })).toBeVisible();
  // The setup code is gone once the first owner exists.
  await expect.poll(() => existsSync(`${dataDir}/setup-code`)).toBe(false);

  // Setup is closed once an owner exists.
  await page.goto('/setup');
  await expect(page).toHaveURL(/\/$/);

  await page.getByTestId('sign-out').click();
  await expect(page).toHaveURL(/\/login$/);
  await expectAccessible(page);

  await page.getByLabel('Email').fill(owner.email.toUpperCase());
  await page.getByLabel('Password').fill('wrong password!');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('login-error')).toBeVisible();
  await expect(page.getByTestId('login-hint')).toContainText('4 tries left');

  // A protected page sends a signed-out owner to sign in and back again.
  await page.goto('/?from=e2e');
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(owner.email.toUpperCase());
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/\?from=e2e$/);
  await expect(page.getByTestId('signed-in-as')).toHaveText(owner.name);
});
