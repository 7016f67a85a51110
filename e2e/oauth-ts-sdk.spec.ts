import { test, expect } from '@playwright/test';
import * as sdk1client from '@modelcontextprotocol/sdk/client/index.js';
import * as sdk1http from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as sdk1auth from '@modelcontextprotocol/sdk/client/auth.js';
import * as sdk2 from '@modelcontextprotocol/client';
import { baseURL, signIn } from './helpers';
import { CookieBrowser, TestProvider } from './oauth-client';

// The official TypeScript MCP SDK against the real server, with nothing
// configured but the /mcp URL: it discovers the authorization server from the
// 401, registers as a public client, sends the "user" to authorize (a
// cookie-carrying HTTP client that signs in and approves), exchanges the
// code, calls tools, refreshes, and is sent back to authorize once the owner
// revokes the connection. Both the 1.x SDK and the 2.x client (pinned in
// package.json) run the same steps.
const clients = [
  {
    version: '1.x',
    Client: sdk1client.Client as any,
    Transport: sdk1http.StreamableHTTPClientTransport as any,
    auth: sdk1auth.auth as any,
    UnauthorizedError: sdk1auth.UnauthorizedError as any,
    finishAuth: (t: any, p: TestProvider) => t.finishAuth(p.code),
  },
  {
    version: '2.x',
    Client: sdk2.Client as any,
    Transport: sdk2.StreamableHTTPClientTransport as any,
    auth: sdk2.auth as any,
    UnauthorizedError: sdk2.UnauthorizedError as any,
    // 2.x checks the iss of the callback (RFC 9207) when given the whole query.
    finishAuth: (t: any, p: TestProvider) => t.finishAuth(p.callback),
  },
];

for (const c of clients) {
  test(`TypeScript SDK ${c.version}: OAuth sign-in, tool calls, refresh, re-authorization after revocation`, async ({ page }) => {
    await signIn(page); // the install has its owner

    const mcpURL = new URL(`${baseURL}/mcp`);
    const clientName = `E2E TypeScript SDK ${c.version}`;
    const handle = `e2e-sdk-${c.version.replace('.x', '')}`;
    const browser = new CookieBrowser();
    const provider = new TestProvider(browser, clientName);
    const connect = async () => {
      const client = new c.Client({ name: 'osfoundry-e2e', version: '1.0.0' });
      await client.connect(new c.Transport(mcpURL, { authProvider: provider }));
      return client;
    };

    // Anonymous: initialize and tools/list answer; a tool call sends the user to authorize.
    let client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t: any) => t.name)).toContain('claim_connected_profile');
    await expect(client.callTool({ name: 'claim_connected_profile', arguments: { handle, display_name: clientName } }))
      .rejects.toThrow(c.UnauthorizedError);
    expect(provider.redirects).toBe(1);
    expect(provider.clientInfo?.client_id).toMatch(/^osf_client_/); // registered dynamically, as a public client
    expect(provider.clientInfo?.client_secret).toBeUndefined();
    expect(provider.callback.get('iss')).toBe(baseURL);

    // Finish the flow and reconnect with a new transport.
    await c.finishAuth(new c.Transport(mcpURL, { authProvider: provider }), provider);
    await client.close();
    client = await connect();
    expect(provider.tokenSet?.scope).toBe('osfoundry:read osfoundry:write');

    const claimed = await client.callTool({ name: 'claim_connected_profile', arguments: { handle, display_name: clientName } });
    expect(claimed.isError, JSON.stringify(claimed)).toBeFalsy();
    const status = await client.callTool({ name: 'set_status', arguments: { repo: 'osfoundry', branch: 'oauth', task: 'end-to-end test' } });
    expect(status.isError, JSON.stringify(status)).toBeFalsy();
    const agents = await client.callTool({ name: 'list_agents', arguments: {} });
    expect(agents.isError, JSON.stringify(agents)).toBeFalsy();
    expect(JSON.stringify(agents)).toContain(handle);

    // Invited to a session by the owner, the agent posts a note to its Team mail.
    const session = await browser.inviteToNewSession(clientName);
    if (session) {
      const note = await client.callTool({
        name: 'post_session_note',
        arguments: { ...session, subject: 'Started', body: `Signed in with the ${c.version} SDK.`, idempotency_key: `e2e-${c.version}` },
      });
      expect(note.isError, JSON.stringify(note)).toBeFalsy();
      expect(JSON.stringify(note)).toContain('"duplicate":false');
    } else {
      test.info().annotations.push({ type: 'skipped step', description: 'post_session_note: this build has no project pages to invite the agent' });
    }

    // Force a refresh: the pair rotates, and the new access token works.
    const before = { ...provider.tokenSet };
    expect(await c.auth(provider, { serverUrl: mcpURL })).toBe('AUTHORIZED');
    expect(provider.tokenSet.refresh_token).not.toBe(before.refresh_token);
    expect(provider.tokenSet.access_token).not.toBe(before.access_token);
    // A parallel session still holding the old refresh token gets the same new pair.
    const parallel = await fetch(`${baseURL}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token', refresh_token: before.refresh_token, client_id: provider.clientInfo.client_id, resource: `${baseURL}/mcp`,
      }),
    });
    expect(parallel.status).toBe(200);
    const same = await parallel.json();
    expect(same.access_token).toBe(provider.tokenSet.access_token);
    expect(same.refresh_token).toBe(provider.tokenSet.refresh_token);
    const afterRefresh = await client.callTool({ name: 'set_status', arguments: { task: 'refreshed' } });
    expect(afterRefresh.isError, JSON.stringify(afterRefresh)).toBeFalsy();

    // The owner revokes the connection: the SDK's next call sends the user back to authorize.
    await browser.revokeConnection(clientName);
    await expect(client.callTool({ name: 'set_status', arguments: { task: 'after revocation' } })).rejects.toThrow(c.UnauthorizedError);
    expect(provider.redirects).toBe(2);
    await client.close();
  });
}
