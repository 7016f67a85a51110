// Client matrix: the official TypeScript SDKs, 1.x (@modelcontextprotocol/sdk)
// and 2.x (@modelcontextprotocol/client), as a host application drives them:
// on UnauthorizedError it finishes the authorization and reconnects.
//
// For 1.x this is the regression test of a read-first sign-in: the 401 of a
// read tool must challenge with both scopes, or the SDK is stuck with a
// read-only token ("Server returned 403 after trying upscoping").
import { test } from '@playwright/test';
import * as sdk1client from '@modelcontextprotocol/sdk/client/index.js';
import * as sdk1http from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as sdk1auth from '@modelcontextprotocol/sdk/client/auth.js';
import * as sdk2 from '@modelcontextprotocol/client';
import { baseURL, signIn } from './helpers';
import { CookieBrowser, TestProvider } from './oauth-client';
import { afterClientTest, installed, onCleanup, runMatrix, type MatrixClient } from './client-matrix';

test.afterEach(afterClientTest);

const flavours = [
  {
    label: installed('@modelcontextprotocol/sdk'),
    handle: 'matrix-ts-sdk-1',
    Client: sdk1client.Client as any,
    Transport: sdk1http.StreamableHTTPClientTransport as any,
    UnauthorizedError: sdk1auth.UnauthorizedError as any,
    finishAuth: (t: any, p: TestProvider) => t.finishAuth(p.code),
  },
  {
    label: installed('@modelcontextprotocol/client'),
    handle: 'matrix-ts-sdk-2',
    Client: sdk2.Client as any,
    Transport: sdk2.StreamableHTTPClientTransport as any,
    UnauthorizedError: sdk2.UnauthorizedError as any,
    // 2.x checks the callback's iss (RFC 9207), so it gets the whole query.
    finishAuth: (t: any, p: TestProvider) => t.finishAuth(p.callback),
  },
];

for (const f of flavours) {
  test(`client matrix: ${f.label}`, async ({ page }) => {
    await signIn(page); // the install has its owner
    const browser = new CookieBrowser();
    const connectionName = `Matrix ${f.label}`;
    const provider = new TestProvider(browser, connectionName);
    const mcpURL = new URL(`${baseURL}/mcp`);
    const connect = async () => {
      const client = new f.Client({ name: 'osfoundry-client-matrix', version: '1.0.0' });
      await client.connect(new f.Transport(mcpURL, { authProvider: provider }));
      return client;
    };
    let client = await connect();
    onCleanup(() => client.close());

    const c: MatrixClient = {
      label: f.label,
      connectionName,
      listTools: async () => (await client.listTools()).tools.map((t: any) => t.name),
      callTool: async (name, args) => {
        try {
          return await client.callTool({ name, arguments: args });
        } catch (err) {
          if (!(err instanceof f.UnauthorizedError)) throw err;
          // The SDK sent the owner to authorize (TestProvider approved); finish and reconnect.
          await f.finishAuth(new f.Transport(mcpURL, { authProvider: provider }), provider);
          await client.close();
          client = await connect();
          return await client.callTool({ name, arguments: args });
        }
      },
      scopesAsked: () => provider.scopesAsked,
    };
    await runMatrix(c, browser, f.handle);
  });
}
