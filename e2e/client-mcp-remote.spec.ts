// Client matrix: mcp-remote, the stdio-to-HTTP bridge Claude Desktop uses to
// reach remote servers. The test is the desktop app: an MCP stdio client (the
// TypeScript SDK's StdioClientTransport) that spawns mcp-remote as its child.
// mcp-remote's OAuth callback listens on a free loopback port; the URL it
// asks the browser to open is caught by a fake xdg-open/$BROWSER and approved
// headlessly, and the redirect is delivered to its listener. Its config
// folder (MCP_REMOTE_CONFIG_DIR) and HOME are a temp folder removed afterwards.
import { test } from '@playwright/test';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { baseURL, signIn } from './helpers';
import { CookieBrowser } from './oauth-client';
import { ClientHome, afterClientTest, approveWhile, freePort, installed, onCleanup, runMatrix, type MatrixClient } from './client-matrix';

test.afterEach(afterClientTest);

test('client matrix: mcp-remote', async ({ page }) => {
  await signIn(page); // the install has its owner
  const browser = new CookieBrowser();
  const home = new ClientHome();
  const port = await freePort();
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(__dirname, '..', 'node_modules', 'mcp-remote', 'dist', 'proxy.js'), `${baseURL}/mcp`, String(port), '--transport', 'http-only'],
    env: home.env({ MCP_REMOTE_CONFIG_DIR: join(home.dir, 'mcp-auth') }),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  const client = new Client({ name: 'osfoundry-client-matrix', version: '1.0.0' });
  onCleanup(() => client.close()); // ends mcp-remote
  const scopesAsked: string[] = [];

  const c: MatrixClient = {
    label: installed('mcp-remote'),
    connectionName: 'MCP CLI Proxy', // the client_name mcp-remote registers
    listTools: async () => (await client.listTools()).tools.map((t: any) => t.name),
    callTool: (name, args) => approveWhile(client.callTool({ name, arguments: args }), () => home.newlyOpened(), browser, (u) => scopesAsked.push(u.searchParams.get('scope') ?? '')),
    scopesAsked: () => scopesAsked,
  };
  try {
    await client.connect(transport);
    await runMatrix(c, browser, 'matrix-mcp-remote');
  } catch (err) {
    console.log(`mcp-remote stderr:\n${stderr.join('')}`);
    throw err;
  }
});
