import { test, expect } from '@playwright/test';
import { createHash, randomBytes } from 'node:crypto';
import { baseURL, owner, signIn, expectAccessible } from './helpers';

// The consent page in a real browser: a signed-out owner signs in and lands
// back on "Connect osFoundry", unticks Write, approves, and the client gets a
// read-only grant; then the owner revokes it on the Connections page.
test('consent: sign in, review, approve read-only, then revoke', async ({ page, request }) => {
  // Make sure the install has an owner, then start signed out.
  await signIn(page);
  await page.getByTestId('sign-out').click();
  await expect(page).toHaveURL(/\/login$/);

  const redirect = 'http://127.0.0.1:53999/callback';
  const reg = await request.post('/register', {
    data: { client_name: 'E2E Consent Client', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' },
  });
  expect(reg.status()).toBe(201);
  const { client_id: clientId } = await reg.json();

  const verifier = randomBytes(48).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = new URL('/authorize', baseURL);
  authorize.search = new URLSearchParams({
    client_id: clientId, redirect_uri: redirect, response_type: 'code', state: 'e2e-state',
    code_challenge: challenge, code_challenge_method: 'S256',
    scope: 'osfoundry:read osfoundry:write', resource: `${baseURL}/mcp`,
  }).toString();

  // The client's loopback listener, played by the test.
  await page.route('http://127.0.0.1:53999/**', (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'done' }));

  await page.goto(authorize.href);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();

  await expect(page.getByRole('heading', { name: 'Connect osFoundry' })).toBeVisible();
  await expect(page.getByTestId('consent-client-name')).toHaveText('E2E Consent Client');
  await expect(page.getByTestId('consent-unverified')).toHaveText('unverified');
  await expect(page.getByTestId('consent-redirect-host')).toHaveText('127.0.0.1:53999');
  await expect(page.getByTestId('consent-scope-Read')).toContainText('See the agents');
  await expectAccessible(page);

  // With no project ticked (an owner with only one finds it ticked), the
  // page warns; a ticked project hides the warning and offers its sessions
  // to invite the agent to.
  const projects = page.getByTestId('consent-project');
  await expect(projects.first()).toBeVisible();
  for (const box of await projects.all()) await box.uncheck();
  const unseated = page.getByTestId('consent-unseated');
  await expect(unseated).toBeVisible();
  await expect(unseated).toContainText('this agent will see nothing until it is seated');
  const radar = page.getByTestId('consent-projects').locator('.consent-project').filter({ hasText: 'Radar E2E' });
  await expect(radar.getByTestId('consent-session')).toBeHidden();
  await radar.getByTestId('consent-project').check();
  await expect(unseated).toBeHidden();
  await expect(radar.getByRole('checkbox', { name: /Orders total/ })).toBeVisible();
  await radar.getByTestId('consent-project').uncheck();
  await expect(unseated).toBeVisible();
  // UPDATE_SCREENSHOTS=1 refreshes the picture docs/oauth.md shows.
  await page.screenshot({ path: process.env.UPDATE_SCREENSHOTS ? 'docs/consent.png' : test.info().outputPath('consent.png'), fullPage: true });

  await page.getByRole('checkbox', { name: /Write/ }).uncheck();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL(/127\.0\.0\.1:53999\/callback/);
  const back = new URL(page.url());
  expect(back.searchParams.get('state')).toBe('e2e-state');
  expect(back.searchParams.get('iss')).toBe(baseURL);
  const code = back.searchParams.get('code');
  expect(code).toBeTruthy();

  const tok = await request.post('/token', {
    form: { grant_type: 'authorization_code', code: code!, code_verifier: verifier, redirect_uri: redirect, client_id: clientId, resource: `${baseURL}/mcp` },
  });
  expect(tok.status()).toBe(200);
  const tokens = await tok.json();
  expect(tokens.scope).toBe('osfoundry:read');
  expect(tokens.refresh_token).toBeTruthy();

  await page.goto('/connections');
  const row = page.getByTestId('connection').filter({ hasText: 'E2E Consent Client' });
  await expect(row.getByTestId('connection-scopes')).toHaveText('Read');
  await expectAccessible(page);
  await row.getByTestId('connection-revoke').click();
  await expect(page.getByTestId('confirm-revoke')).toBeVisible();
  await page.getByTestId('confirm-revoke-submit').click();
  await expect(page).toHaveURL(/\/connections$/);
  await expect(page.getByTestId('connection').filter({ hasText: 'E2E Consent Client' })).toHaveCount(0);

  const refused = await request.post('/token', {
    form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId },
  });
  expect(refused.status()).toBe(400);
  expect((await refused.json()).error).toBe('invalid_grant');
});
