import type sanitize from 'sanitize-html';
import { onUse } from '../util/on-use.js';

// Allow-list for rich-text notes (activity descriptions). Anything not listed
// is dropped but its text is kept; script/style/textarea/noscript contents are
// dropped entirely (sanitize-html's nonTextTags).
const OPTIONS: sanitize.IOptions = {
  allowedTags: [
    'p',
    'br',
    'b',
    'i',
    'strong',
    'em',
    'u',
    's',
    'a',
    'ul',
    'ol',
    'li',
    'blockquote',
    'code',
    'pre',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'span',
    'div',
    'img',
    'table',
    'thead',
    'tbody',
    'tfoot',
    'tr',
    'th',
    'td',
    'caption',
    'colgroup',
    'col',
  ],
  // No `style`, `class` or `on*` attributes anywhere.
  allowedAttributes: {
    a: ['href', 'title', 'target', 'rel'],
    img: ['src', 'alt'],
    th: ['colspan', 'rowspan'],
    td: ['colspan', 'rowspan'],
  },
  // Anything else (javascript:, data:, vbscript:, …) loses the attribute.
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  transformTags: {
    // A link opening a new tab must not hand `window.opener` to the target page.
    a: (tagName, attribs) => (attribs.target === '_blank' ? { tagName, attribs: { ...attribs, rel: 'noopener noreferrer' } } : { tagName, attribs }),
  },
};

/**
 * Sanitizes HTML written into rich-text fields.
 *
 * Text without any `<` is returned unchanged: with no `<` there can be no tag,
 * attribute or script, so it is already safe to render as HTML, and plain
 * text / markdown (`a & b`, `> quote`, `**bold**`) round-trips byte-for-byte.
 * Input with markup goes through sanitize-html, whose output is HTML: text in
 * it is entity-escaped (`&` → `&amp;`, `<` → `&lt;`, `>` → `&gt;`).
 */
export function sanitizeHtml(s: string): string {
  if (!s.includes('<')) return s;
  // Loaded with the first markup (util/on-use.ts): the parser and its dependencies are ~0.5 MiB of code.
  return onUse<typeof sanitize>('sanitize-html')(s, OPTIONS);
}
