// Host-name rules shared by e-mail domains, company domains and website URLs.

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// TLDs are alphabetic; IDN TLDs appear in punycode form (e.g. `xn--p1ai` for `.рф`).
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/**
 * True for a lower-case ASCII (punycode) DNS name with at least two labels.
 * IP addresses and single-label names (`localhost`) are rejected on purpose:
 * these fields describe public organisations.
 */
export function isValidHostname(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split('.');
  if (labels.length < 2) return false;
  if (!labels.every((l) => LABEL.test(l))) return false;
  return TLD.test(labels[labels.length - 1]);
}

/**
 * Lower-cases a host and converts Unicode (IDN) labels to punycode with the
 * WHATWG URL parser, which also applies IDNA mapping. Returns null when the
 * URL parser refuses the host.
 */
export function toAsciiHostname(host: string): string | null {
  const lower = host.toLowerCase();
  if (/^[\x00-\x7f]*$/.test(lower)) return lower;
  // Characters that would make the URL parser read a different host than intended.
  if (/[\s/\\?#@:%]/.test(lower)) return null;
  try {
    return new URL(`http://${lower}`).hostname;
  } catch {
    return null;
  }
}
