import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitizeHtml } from '../../src/domain/html.js';

test('plain text and markdown without markup pass through unchanged', () => {
  for (const s of ['', 'a & b', '**bold** - item', '> quoted line\n\n- one\n- two', '# Title\n`code` & "quotes"', 'x > y', 'AT&amp;T']) {
    assert.equal(sanitizeHtml(s), s);
  }
});

test('allowed rich-text markup is kept', () => {
  const html =
    '<h2>Call</h2><p><strong>Next</strong> <em>steps</em>:</p><ul><li><a href="https://acme.com" title="site">site</a></li></ul>' +
    '<blockquote>q</blockquote><pre><code>x</code></pre><table><thead><tr><th>h</th></tr></thead><tbody><tr><td colspan="2">c</td></tr></tbody></table>';
  assert.equal(sanitizeHtml(html), html);
  assert.equal(sanitizeHtml('<p>a<br />b</p>'), '<p>a<br />b</p>');
  assert.equal(sanitizeHtml('<img src="https://x.com/a.png" alt="A">'), '<img src="https://x.com/a.png" alt="A" />');
  assert.equal(sanitizeHtml('<a href="mailto:a@b.com">m</a>'), '<a href="mailto:a@b.com">m</a>');
  assert.equal(sanitizeHtml('<a href="tel:+5511987654321">t</a>'), '<a href="tel:+5511987654321">t</a>');
  assert.equal(sanitizeHtml('<a href="/relative">r</a>'), '<a href="/relative">r</a>');
});

test('text inside markup is HTML-escaped', () => {
  assert.equal(sanitizeHtml('<p>a & b</p>'), '<p>a &amp; b</p>');
  assert.equal(sanitizeHtml('<p>**bold** - item</p>'), '<p>**bold** - item</p>');
  assert.equal(sanitizeHtml('x < y'), 'x &lt; y');
});

test('scripts and styles are removed with their content', () => {
  assert.equal(sanitizeHtml('<script>alert(1)</script>hello'), 'hello');
  assert.equal(sanitizeHtml('<p>a</p><SCRIPT src="https://evil.com/x.js"></SCRIPT>'), '<p>a</p>');
  assert.equal(sanitizeHtml('<style>body{display:none}</style>ok'), 'ok');
  assert.equal(sanitizeHtml('<svg><script>alert(1)</script></svg>'), '');
  assert.equal(sanitizeHtml('<iframe src="https://evil.com"></iframe>t'), 't');
});

test('event-handler, style and class attributes are removed', () => {
  assert.equal(sanitizeHtml('<img src=x onerror=alert(1)>'), '<img src="x" />');
  assert.equal(sanitizeHtml('<p onclick="steal()" style="color:red" class="c">x</p>'), '<p>x</p>');
  assert.equal(sanitizeHtml('<a href="https://a.com" onmouseover="x()">a</a>'), '<a href="https://a.com">a</a>');
});

test('javascript:, data: and other schemes are removed from links and images', () => {
  for (const href of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'java&#x09;script:alert(1)',
    'javascript&colon;alert(1)',
    'vbscript:x',
    'data:text/html,<script>alert(1)</script>',
  ]) {
    const out = sanitizeHtml(`<a href="${href}">x</a>`);
    assert.equal(out, '<a>x</a>', href);
  }
  assert.equal(sanitizeHtml('<img src="javascript:alert(1)">'), '<img />');
  assert.equal(sanitizeHtml('<img src="data:image/png;base64,AAAA">'), '<img />');
  assert.equal(sanitizeHtml('<img src="mailto:a@b.com">'), '<img />');
});

test('links opening a new tab get rel="noopener noreferrer"', () => {
  assert.equal(sanitizeHtml('<a href="https://a.com" target="_blank">a</a>'), '<a href="https://a.com" target="_blank" rel="noopener noreferrer">a</a>');
  assert.equal(sanitizeHtml('<a href="https://a.com" rel="nofollow">a</a>'), '<a href="https://a.com" rel="nofollow">a</a>');
});
