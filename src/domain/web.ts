import { DomainError } from './errors.js';
import { isValidHostname, toAsciiHostname } from './hostname.js';

/**
 * Company `domain`: a bare lower-case host name (CONTRACT B.3). Scheme,
 * user-less authority, `www.`, port, path, query, fragment and a trailing dot
 * are stripped; IDN hosts are stored in punycode so equality matching works.
 * `www.` is kept when removing it would leave a single label (`www.com`).
 */
export function normalizeDomain(s: string): string {
  if (typeof s !== 'string') throw new DomainError('must be a string');
  const invalid = new DomainError('must be a valid domain name');
  let host = s.trim();
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^\/\//, '');
  host = host.split(/[/?#]/, 1)[0];
  // An `@` means credentials or an e-mail pasted into the field: refuse rather than guess.
  if (host.includes('@')) throw invalid;
  host = host.replace(/:\d*$/, '').replace(/\.$/, '');
  const ascii = toAsciiHostname(host);
  if (ascii === null) throw invalid;
  host = ascii;
  if (host.startsWith('www.') && host.indexOf('.', 4) !== -1) host = host.slice(4);
  if (!isValidHostname(host)) throw invalid;
  return host;
}

/**
 * Company `website`: a full http(s) URL with a public-looking host name.
 * Returns the trimmed input unchanged (not `URL.href`), so clients read back
 * exactly what they wrote (no added trailing `/`, no case folding).
 * URLs carrying credentials are refused: they would leak a secret on every read.
 */
export function normalizeWebsite(s: string): string {
  if (typeof s !== 'string') throw new DomainError('must be a string');
  const input = s.trim();
  const invalid = new DomainError('must be a full http(s) URL');
  if (input.length === 0 || input.length > 2048 || /\s/.test(input)) throw invalid;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw invalid;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid;
  // The WHATWG parser also "fixes" `http:example.com`; require the explicit `//`.
  if (!/^https?:\/\//i.test(input)) throw invalid;
  if (url.username || url.password) throw invalid;
  if (!isValidHostname(url.hostname.replace(/\.$/, ''))) throw invalid;
  return input;
}
