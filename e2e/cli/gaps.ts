// Server behaviour the agent-CLI specs expect but this build does not have
// yet. Each gap is one constant: while `fixed` is false, the assertions that
// depend on it must fail the way the gap makes them fail (the step shows
// "✗ known gap …" and the test passes); a gap that no longer fails fails the
// test, so that someone flips the constant. With `fixed: true` the same
// assertions must pass.
//
// Assertions per gap (each CLI spec runs them through dependsOn):
//   revokedTokenAnswered  "revoke": after the owner revokes, the CLI's next
//                         start offers the model no osFoundry tools (its
//                         initialize/tools/list with the revoked token were
//                         refused), in every CLI spec.
//   unreadHintTextOnly    "unread hint": for a CLI that hands the model only a
//                         tool's structured content (Codex), the result after
//                         the owner's reply carries "unread note".
//   metadataDocumentsOn   "sign-in" (Codex): `codex mcp add` with its default
//                         registration signs in by itself on a server that
//                         cannot fetch Codex's client metadata document.
import { test } from '@playwright/test';

export interface Gap {
  /** A short name, shown in the matrix. */
  id: string;
  /** What the server does now. */
  what: string;
  /** Set to true once the server behaves as the assertions expect. */
  fixed: boolean;
}

/** A presented bad or revoked token on initialize/tools/list gets 200 instead of 401 invalid_token. */
export const revokedTokenAnswered: Gap = {
  id: 'revoked token listed tools',
  what: 'initialize and tools/list with a revoked token answer 200, not 401 invalid_token',
  fixed: true,
};

/** The unread hint is only a text block, not structuredContent.unread.hint. */
export const unreadHintTextOnly: Gap = {
  id: 'unread hint only in text',
  what: 'the unread hint is only a text block; structuredContent.unread has no hint',
  fixed: true,
};

/**
 * client_id_metadata_document_supported is always advertised: no operator
 * switch stops it. `flag` is the serve flag that will, added to the e2e
 * server's command line (playwright.config.ts) once `fixed` is true.
 */
export const metadataDocumentsOn: Gap & { flag: string } = {
  id: 'no switch for metadata documents',
  what: 'client_id_metadata_document_supported is advertised with no operator switch to stop it',
  fixed: true,
  flag: '--client-metadata-documents=off',
};

/** A step's outcome that a known gap explains: the step is shown as ✗ and the test goes on. */
export class KnownGap {
  constructor(readonly gap: Gap, readonly note: string) {}
}

/**
 * Runs an assertion of the fixed behaviour. With the gap fixed it must pass
 * (its note is returned). While the gap is open it must fail: the failure is
 * returned as a KnownGap (and annotated on the test); passing fails the test.
 */
export async function dependsOn(gap: Gap, check: () => Promise<string | void> | string | void): Promise<string | KnownGap> {
  if (gap.fixed) return (await check()) ?? '';
  let passed = false;
  try {
    await check();
    passed = true;
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
    test.info().annotations.push({ type: 'known gap', description: `${gap.id}: ${msg}` });
    return new KnownGap(gap, msg);
  }
  if (passed) throw new Error(`"${gap.id}" no longer fails: set fixed: true for it in e2e/cli/gaps.ts`);
  return '';
}
