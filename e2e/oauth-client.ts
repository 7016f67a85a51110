// A headless stand-in for the person in front of an MCP client: a
// cookie-carrying HTTP client that follows an authorization URL, signs the
// owner in, approves the consent page and hands back the code; and an
// OAuthClientProvider for the official TypeScript SDK that uses it.
import { baseURL, owner, setupCode } from './helpers';

/** Decodes the HTML entities templ writes in attribute values. */
function unescapeHTML(s: string): string {
  return s
    .replace(/&#34;|&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Returns the [name, value] pairs of a page's hidden inputs, in order. */
export function hiddenInputs(html: string): [string, string][] {
  const out: [string, string][] = [];
  for (const tag of html.match(/<input\b[^>]*>/g) ?? []) {
    const attr = (n: string) => tag.match(new RegExp(`\\b${n}="([^"]*)"`))?.[1];
    if (attr('type') === 'hidden' && attr('name')) out.push([attr('name')!, unescapeHTML(attr('value') ?? '')]);
  }
  return out;
}

/** Returns the [name, value] pairs of a page's checked radio buttons, in order: what a browser submits of them untouched. */
export function checkedRadios(html: string): [string, string][] {
  const out: [string, string][] = [];
  for (const tag of html.match(/<input\b[^>]*>/g) ?? []) {
    const attr = (n: string) => tag.match(new RegExp(`\\b${n}="([^"]*)"`))?.[1];
    if (attr('type') === 'radio' && /\schecked(\s|=|\/?>)/.test(tag) && attr('name')) out.push([attr('name')!, unescapeHTML(attr('value') ?? '')]);
  }
  return out;
}

/** A minimal browser: keeps cookies, never follows redirects by itself. */
export class CookieBrowser {
  private cookies = new Map<string, string>();
  /** The web app's path of each session inviteToNewSession made, by its public id. */
  readonly sessionPaths = new Map<string, string>();

  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new URL(url, baseURL), { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (/max-age=(0|-\d+)/i.test(c) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  async postForm(url: string | URL, fields: [string, string][]): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /**
   * Signs the owner in, creating the first owner on a fresh install (the
   * agent-CLI specs may run alone, before any spec has set it up).
   */
  async signInOrSetUp(): Promise<void> {
    const setup = await this.fetch('/setup');
    if (setup.status === 200) {
      const fields = hiddenInputs(await setup.text());
      const res = await this.postForm('/setup', [...fields, ['setup_code', setupCode()], ['email', owner.email], ['display_name', owner.name],
        ['workspace', owner.workspace], ['password', owner.password]]);
      if (res.status === 303) return;
    } else await setup.arrayBuffer();
    await this.signIn();
  }

  /** Signs the owner in (for the web app's forms, without an authorization to follow). */
  async signIn(): Promise<void> {
    const fields = hiddenInputs(await (await this.fetch('/login')).text());
    const res = await this.postForm('/login', [...fields, ['email', owner.email], ['password', owner.password]]);
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  }

  /**
   * Follows an authorization URL as the owner would: signs in when asked,
   * approves the consent page (granting write unless told not to, seating the
   * agent in no project, taking the agent the page preselects: the one this
   * registration already is, else a new agent), and returns the redirect
   * back to the client.
   */
  async approve(authorizationUrl: URL, opts: { write?: boolean } = {}): Promise<URL> {
    let res = await this.fetch(authorizationUrl);
    let location = res.headers.get('location');
    if (res.status === 303 && location?.startsWith('/login')) {
      const login = await this.fetch(location);
      const fields = hiddenInputs(await login.text());
      res = await this.postForm('/login', [...fields, ['email', owner.email], ['password', owner.password]]);
      location = res.headers.get('location');
      if (res.status !== 303 || !location?.startsWith('/authorize')) throw new Error(`sign-in answered ${res.status} → ${location}`);
      res = await this.fetch(location);
    }
    const html = await res.text();
    if (res.status !== 200 || !html.includes('data-testid="consent"')) {
      throw new Error(`expected the consent page, got ${res.status} ${res.headers.get('location') ?? ''}: ${html.slice(0, 300)}`);
    }
    const fields = [...hiddenInputs(html), ...checkedRadios(html)];
    if (opts.write !== false && html.includes('value="osfoundry:write"')) fields.push(['grant', 'osfoundry:write']);
    fields.push(['decision', 'approve']);
    res = await this.postForm('/authorize', fields);
    location = res.headers.get('location');
    if (res.status !== 303 || !location) throw new Error(`consent answered ${res.status}`);
    return new URL(location);
  }

  /** The client name Connections lists for the newest live connection whose name contains clientName. */
  async connectionClient(clientName: string): Promise<string> {
    const page = await (await this.fetch('/connections')).text();
    const row = page.split('<tr').find((r) => r.includes('data-testid="connection"') && r.includes(clientName));
    const cell = row?.match(/data-testid="connection-client"[^>]*>([^<]*)/)?.[1].trim();
    if (!cell) throw new Error(`no connection of ${clientName} listed`);
    return cell;
  }

  /** The id of the newest live connection of a client, from the Connections page. */
  async connectionId(clientName: string): Promise<string> {
    const page = await (await this.fetch('/connections')).text();
    const row = page.split('<tr').find((r) => r.includes('data-testid="connection"') && r.includes(clientName));
    const id = row?.match(/data-connection-id="(\d+)"/)?.[1];
    if (!id) throw new Error(`no connection of ${clientName} listed`);
    return id;
  }

  /**
   * Creates a project and a team session in it through the web app's forms
   * and invites the client's connection as a contributor. Returns how agents
   * address the session, or null when this build has no project pages.
   */
  async inviteToNewSession(clientName: string): Promise<{ session_type: string; session_id: string } | null> {
    const csrf = hiddenInputs(await (await this.fetch('/connections')).text()).filter(([k]) => k === '_csrf');
    let res = await this.postForm('/projects', [...csrf, ['name', `${clientName} project`]]);
    if (res.status === 404 || res.status === 405) return null;
    const project = res.headers.get('location');
    if (res.status !== 303 || !project?.startsWith('/projects/')) throw new Error(`create project answered ${res.status}`);
    res = await this.postForm(`${project}/sessions`, [...csrf, ['session_type', 'team_session'], ['title', 'OAuth end-to-end']]);
    const session = res.headers.get('location');
    if (res.status !== 303 || !session?.startsWith('/sessions/')) throw new Error(`create session answered ${res.status}`);
    const page = await (await this.fetch(session)).text();
    const publicId = page.match(/data-testid="session-public-id"[^>]*>([^<]+)</)?.[1];
    if (!publicId) throw new Error('no session id on the session page');
    res = await this.postForm(`${session}/invitations`, [...csrf, ['connection_id', await this.connectionId(clientName)], ['role', 'contributor']]);
    if (res.status !== 303) throw new Error(`invite answered ${res.status}`);
    // The owner's note, for the agent to answer with reply_to_sender.
    res = await this.postForm(`${session}/mail`, [...csrf, ['type', 'note'], ['subject', 'Welcome'], ['body', 'Tell me when you start.']]);
    if (res.status !== 303) throw new Error(`owner's note answered ${res.status}`);
    this.sessionPaths.set(publicId, session);
    return { session_type: 'team_session', session_id: publicId };
  }

  /** The owner answers a note from the session's Team mail tab (a reply to its sender). */
  async replyToNote(sessionId: string, noteId: number, body: string): Promise<void> {
    const session = this.sessionPath(sessionId);
    const csrf = hiddenInputs(await (await this.fetch(session)).text()).filter(([k]) => k === '_csrf');
    const res = await this.postForm(`${session}/mail`, [...csrf, ['type', 'reply'], ['reply_to', String(noteId)], ['subject', 'Re: Started'], ['body', body]]);
    if (res.status !== 303) throw new Error(`owner's reply answered ${res.status}`);
  }

  /** The session's Team mail tab as the owner sees it (HTML). */
  async teamMail(sessionId: string): Promise<string> {
    const res = await this.fetch(this.sessionPath(sessionId));
    if (res.status !== 200) throw new Error(`the session page answered ${res.status}`);
    return res.text();
  }

  private sessionPath(sessionId: string): string {
    const path = this.sessionPaths.get(sessionId);
    if (!path) throw new Error(`session ${sessionId} was not made by inviteToNewSession`);
    return path;
  }

  /**
   * Mints a bearer token on Connections → Connect a client without OAuth, as
   * the owner does for a client that only takes a fixed header; returns the
   * token shown once.
   */
  async mintToken(clientName: string): Promise<string> {
    const csrf = hiddenInputs(await (await this.fetch('/connections')).text()).filter(([k]) => k === '_csrf');
    const res = await this.postForm('/connections/tokens', [...csrf, ['client_name', clientName], ['scope', 'osfoundry:read'], ['scope', 'osfoundry:write']]);
    if (res.status !== 303) throw new Error(`minting a token answered ${res.status}`);
    const page = await (await this.fetch(res.headers.get('location') ?? '/connections')).text();
    const token = page.match(/data-testid="new-token-value"/) && page.match(/value="(osf_at_[A-Za-z0-9_-]+)"/)?.[1];
    if (!token) throw new Error('no token shown on the Connections page');
    return token;
  }

  /** Revokes the newest connection of a client, as the owner does on the Connections page. */
  async revokeConnection(clientName: string): Promise<void> {
    const id = await this.connectionId(clientName);
    const confirm = await (await this.fetch(`/connections/${id}/revoke`)).text();
    const res = await this.postForm(`/connections/${id}/revoke`, hiddenInputs(confirm));
    if (res.status !== 303) throw new Error(`revoke answered ${res.status}`);
  }
}

/** The callback a native client would listen on (nothing needs to listen). */
export const redirectUrl = 'http://127.0.0.1:54321/callback';

/**
 * An OAuthClientProvider (the SDK's interface) that keeps everything in
 * memory and "opens the browser" with a CookieBrowser.
 */
export class TestProvider {
  clientInfo: any;
  tokenSet: any;
  verifier = '';
  /** How many times the SDK sent the user to authorize. */
  redirects = 0;
  /** The scope each of those authorizations asked for. */
  scopesAsked: string[] = [];
  /** The code from the last approval, and the whole callback query (code, state, iss). */
  code = '';
  callback = new URLSearchParams();

  constructor(private browser: CookieBrowser, readonly clientName: string) {}

  get redirectUrl(): string {
    return redirectUrl;
  }

  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.clientInfo;
  }

  saveClientInformation(info: any) {
    this.clientInfo = info;
  }

  tokens() {
    return this.tokenSet;
  }

  saveTokens(tokens: any) {
    this.tokenSet = tokens;
  }

  async redirectToAuthorization(url: URL) {
    this.redirects++;
    this.scopesAsked.push(url.searchParams.get('scope') ?? '');
    const back = await this.browser.approve(url);
    if (back.origin + back.pathname !== redirectUrl) throw new Error(`redirected to ${back}`);
    const error = back.searchParams.get('error');
    if (error) throw new Error(`authorization refused: ${error}: ${back.searchParams.get('error_description')}`);
    this.code = back.searchParams.get('code') ?? '';
    this.callback = back.searchParams;
  }

  discovery: any;

  saveDiscoveryState(state: any) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }

  saveCodeVerifier(v: string) {
    this.verifier = v;
  }

  codeVerifier() {
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.tokenSet = undefined;
    if (scope === 'all' || scope === 'client') this.clientInfo = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}
