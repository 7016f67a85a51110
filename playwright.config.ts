import { defineConfig } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { metadataDocumentsOn } from './e2e/cli/gaps';

// One server for the whole run, on its own private PostgreSQL in a fresh data
// folder; specs share it and run one at a time, in file-name order; then the
// agent-CLI specs (cli-*.spec.ts), independent of each other, two at a time.
// It may reach private targets: the webhook spec's receiver listens on loopback. It
// mails through mailpit (below). The
// port is E2E_PORT, or a free one chosen here and put in the environment, so
// that the workers (which load this file again) use the same.
if (!process.env.E2E_PORT) {
  process.env.E2E_PORT = execFileSync(process.execPath, ['-e',
    'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })',
  ], { encoding: 'utf8' }).trim();
}
const port = Number(process.env.E2E_PORT);
export const baseURL = `http://127.0.0.1:${port}`;
export const dataDir = process.env.E2E_DATA_DIR || `/tmp/osfoundry-e2e-${port}`;

// The server mails through a real SMTP server, mailpit (built by `make
// mailpit` into OSFOUNDRY_MAILPIT), on two more free loopback ports, kept in
// the environment like E2E_PORT; specs read the mail through its HTTP API.
const freePort = () => execFileSync(process.execPath, ['-e',
  'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })',
], { encoding: 'utf8' }).trim();
process.env.E2E_SMTP_PORT ||= freePort();
process.env.E2E_MAILPIT_PORT ||= freePort();
export const mailpitURL = `http://127.0.0.1:${process.env.E2E_MAILPIT_PORT}`;
const smtpURL = `smtp://127.0.0.1:${process.env.E2E_SMTP_PORT}?tls=none`;
const mailpitVersion = readFileSync('email/mailpittest/mailpittest.go', 'utf8').match(/^const Version = "(.+)"$/m)?.[1];
const mailpit = process.env.OSFOUNDRY_MAILPIT
  || `${process.env.XDG_CACHE_HOME || `${process.env.HOME}/.cache`}/osfoundry/mailpit-${mailpitVersion}/mailpit`;

export default defineConfig({
  testDir: './e2e',
  outputDir: './test-results',
  fullyParallel: false,
  workers: 2,
  projects: [
    { name: 'app', testIgnore: /(^|[\\/])cli-[^\\/]*\.spec\.ts$/, workers: 1 },
    { name: 'agent-cli', testMatch: /(^|[\\/])cli-[^\\/]*\.spec\.ts$/, dependencies: ['app'], fullyParallel: true },
  ],
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  use: {
    baseURL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        // Shared memory in the temp folder rather than /dev/shm, which may be small (containers)
        // or busy with the Go tests' databases.
        '--disable-dev-shm-usage',
      ],
    },
  },
  webServer: [{
    command: `exec ${mailpit} --smtp 127.0.0.1:${process.env.E2E_SMTP_PORT} --listen 127.0.0.1:${process.env.E2E_MAILPIT_PORT} --disable-version-check --quiet`,
    url: `${mailpitURL}/api/v1/info`,
    timeout: 30_000,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 5_000 },
  }, {
    command: `rm -rf ${dataDir} && exec ./bin/osfoundry serve --addr 127.0.0.1:${port} --data-dir ${dataDir} --log-level warn --allow-private-targets${metadataDocumentsOn.fixed ? ` ${metadataDocumentsOn.flag}` : ''}`
      + ` --smtp-url '${smtpURL}' --smtp-from 'osFoundry <osfoundry@example.com>'`,
    url: `${baseURL}/readyz`,
    timeout: 60_000,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 15_000 },
  }],
});
