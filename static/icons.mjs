// Draws the installable icons (icon-*.png, apple-touch-icon.png, badge-96.png)
// from the mark of logo.svg, in Chromium: `node static/icons.mjs` from the
// repository root.
import { chromium } from 'playwright';
const svg = (s) => `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="${s}" height="${s}"><rect width="32" height="32" rx="7" fill="#2f6f5e"/><path d="M9 22V10h9v3h-6v2h5v3h-5v4z" fill="#fff"/><circle cx="22" cy="20" r="3" fill="#f2c14e"/></svg>`;
// Maskable: full bleed, the mark inside the 80% safe circle.
const maskable = (s) => `<svg xmlns="http://www.w3.org/2000/svg" viewBox="-8 -8 48 48" width="${s}" height="${s}"><rect x="-8" y="-8" width="48" height="48" fill="#2f6f5e"/><path d="M9 22V10h9v3h-6v2h5v3h-5v4z" fill="#fff"/><circle cx="22" cy="20" r="3" fill="#f2c14e"/></svg>`;
// Monochrome badge for the status bar: the mark in white on transparent.
const badge = (s) => `<svg xmlns="http://www.w3.org/2000/svg" viewBox="4 4 24 24" width="${s}" height="${s}"><path d="M9 22V10h9v3h-6v2h5v3h-5v4z" fill="#fff"/><circle cx="22" cy="20" r="3" fill="#fff"/></svg>`;
const b = await chromium.launch({ executablePath: '/usr/bin/chromium' });
const p = await b.newPage();
for (const [name, s, f] of [['icon-192.png', 192, svg], ['icon-512.png', 512, svg], ['icon-maskable-512.png', 512, maskable], ['apple-touch-icon.png', 180, maskable], ['badge-96.png', 96, badge]]) {
  await p.setViewportSize({ width: s, height: s });
  await p.setContent(`<html><body style="margin:0;background:transparent">${f(s)}</body></html>`);
  await p.locator('svg').screenshot({ path: `static/${name}`, omitBackground: true });
}
await b.close();
