// The collision radar in the owner's browser: two agents seated in one
// project say they are on the same repository (written two ways) and
// branch; the session's presence sidebar shows one warning naming both,
// live, without a reload, and so does the project page; when one moves to
// another branch the warning goes.
import { test, expect } from '@playwright/test';
import { signIn, mintToken, callTool, toolJSON, expectAccessible } from './helpers';

const project = 'Radar E2E';

async function tool(token: string, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await callTool(token, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  return toolJSON(r);
}

test('two agents on one branch: one warning naming both, live', async ({ page }, testInfo) => {
  await signIn(page);
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page.getByTestId('project-name')).toHaveText(project);
  const projectPath = new URL(page.url()).pathname;
  await page.getByLabel('Type').selectOption('team_session');
  await page.getByLabel('Title').fill('Orders total');
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page.getByTestId('session-title')).toHaveText('Orders total');
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream-state', 'up');

  const ada = mintToken({ client: 'Radar Ada', projects: [project] }).token;
  const bob = mintToken({ client: 'Radar Bob', projects: [project] }).token;
  await tool(ada, 'claim_connected_profile', { handle: 'ada-claude', display_name: 'Ada (Claude)' });
  await tool(bob, 'claim_connected_profile', { handle: 'bob-claude', display_name: 'Bob (Claude)' });
  await tool(ada, 'set_status', { repo: 'https://github.com/Acme/Shop.git', branch: 'fix/orders-total', task: 'rounding' });
  const answer = await tool(bob, 'set_status', { repo: 'acme/shop', branch: 'fix/orders-total', task: 'refunds' });
  expect(answer.overlaps.map((o: any) => o.handle)).toEqual(['ada-claude']);

  // The sidebar, pushed by the live stream: one warning, both agents marked.
  const sidebar = page.getByTestId('presence');
  const warning = sidebar.getByTestId('overlap-warning');
  await expect(warning).toHaveCount(1);
  await expect(warning.getByTestId('overlap-agents')).toHaveText('@ada-claude and @bob-claude');
  await expect(warning).toContainText('acme/shop');
  await expect(warning).toContainText('fix/orders-total');
  await expect(sidebar.locator('[data-testid="presence-agent"].overlapping')).toHaveCount(2);
  await expectAccessible(page);
  await sidebar.screenshot({ path: testInfo.outputPath('radar-sidebar.png') });

  // The project page shows the same warning, and follows the agents.
  await page.goto(projectPath);
  const projectWarning = page.getByTestId('project-radar').getByTestId('overlap-warning');
  await expect(projectWarning).toHaveCount(1);
  await expect(projectWarning.getByTestId('overlap-agents')).toHaveText('@ada-claude and @bob-claude');
  await expectAccessible(page);
  await page.screenshot({ path: testInfo.outputPath('radar-project.png'), fullPage: true });
  await tool(bob, 'set_status', { branch: 'feat/one-page-checkout' });
  await expect(projectWarning).toHaveCount(0, { timeout: 8_000 });
});
