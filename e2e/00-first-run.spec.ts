import { test, expect } from '@playwright/test';
import { owner, signIn, expectAccessible } from './helpers';

test('a fresh install asks for the first owner, then signs in and out', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole('heading', { name: 'Create the first owner account' })).toBeVisible();
  await expectAccessible(page);

  // A too-short password is refused next to the field, keeping what was typed.
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Your name').fill(owner.name);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByTestId('error-password')).toContainText('at least 10 characters');
  await expect(page.getByLabel('Email')).toHaveValue(owner.email);

  await signIn(page);
  await expect(page.getByRole('heading', { name: 'Projects' })).toBeVisible();

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

  // A protected page sends a signed-out owner to sign in and back again.
  await page.goto('/?from=e2e');
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(owner.email.toUpperCase());
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/\?from=e2e$/);
  await expect(page.getByTestId('signed-in-as')).toHaveText(owner.name);
});
