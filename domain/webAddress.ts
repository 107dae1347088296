/**
 * The one parser of the web addresses people type or paste: profile, company and post URLs of
 * the professional network, company websites. Matching keys (domain/identity.ts), source URL
 * classification (domain/sourceRules.ts) and post-thread resolution (domain/pronetUrls.ts) all
 * read an address through `parseWebAddress`.
 *
 * It splits the text lexically rather than with WHATWG `URL`, because the stored matching keys
 * (`contacts.pronet_key`, `ds_people.member_pronet_url`, company domains) were made this way: `URL`
 * would re-encode non-ASCII paths, punycode hosts and drop default ports, so the same input would
 * stop matching what is already stored.
 */

export interface WebAddress {
  /** `https`, `http`, … in lower case; null when the text starts with the host (`acme.com/x`). */
  scheme: string | null;
  /** What stands between the scheme and the path, lower case, without a leading `www.` (`acme.com:8080`). */
  authority: string;
  /** The authority without credentials and port (`acme.com`). */
  host: string;
  /** The path as written (`/in/Jane-Doe/`), '' when none; query and fragment are dropped. */
  path: string;
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** `https://www.Acme.com:8080/In/x/?q#f` → scheme `https`, authority `acme.com:8080`, host `acme.com`, path `/In/x/`; null for blank text. */
export function parseWebAddress(raw: string | null | undefined): WebAddress | null {
  const text = raw?.trim();
  if (!text) return null;
  const scheme = SCHEME.exec(text);
  const rest = (scheme ? text.slice(scheme[0].length) : text).replace(/[?#].*$/s, '');
  const slash = rest.indexOf('/');
  const authority = (slash === -1 ? rest : rest.slice(0, slash)).toLowerCase().replace(/^www\./, '');
  return {
    scheme: scheme ? scheme[1]!.toLowerCase() : null,
    authority,
    host: authority.replace(/^[^@]*@/, '').replace(/:.*$/, ''),
    path: slash === -1 ? '' : rest.slice(slash),
  };
}

const HTTP_AUTHORITY = /^(?:[^@\\\s]*@)?[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+(?::\d{1,5})?$/u;

/**
 * An http(s) address (or, unless `schemeRequired`, a scheme-less one) whose authority is a dotted
 * host name with optional credentials and port: what a pasted link must be. A backslash is refused
 * because browsers read it as `/` (`https://evil.com\@linkedin.com` is evil.com).
 */
export function isHttpAddress(a: WebAddress, opts: { schemeRequired?: boolean } = {}): boolean {
  if (a.scheme === null ? opts.schemeRequired : a.scheme !== 'http' && a.scheme !== 'https') return false;
  return HTTP_AUTHORITY.test(a.authority);
}

/** The path with its percent-escapes decoded (`/in/j%C3%A9` → `/in/jé`); null when an escape is malformed. */
export function decodedPath(a: WebAddress): string | null {
  try {
    return decodeURIComponent(a.path);
  } catch {
    return null;
  }
}
