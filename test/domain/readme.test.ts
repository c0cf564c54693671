// The README is written for integrators (issue 50): its first screen (60 lines) takes a newcomer from a clone
// to a verified webhook on localhost, and no link of the README or of docs/ leaves the repository (a clone has
// nothing beside it): relative links resolve to files of the repository, anchors to headings of their file,
// and absolute URLs are only localhost examples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const README = read('README.md');
const DOCS = readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

test('the first screen of the README runs the server, exports the key, shows /docs, the SDK and listen', () => {
  const first = README.split('\n').slice(0, 60).join('\n');
  for (const needed of [
    'npm ci && npm start',
    'export KEY=',
    'BASE=',
    '/docs',
    'listen',
    '--forward-to',
    'verifyWebhook',
    '@crm/sdk',
    'keys create',
    'npm test',
  ]) {
    assert.ok(first.includes(needed), `the first 60 lines mention ${needed}`);
  }
  // The receiver verifies with the SDK's function, as the SDK exports it.
  assert.match(first, /verifyWebhook\(process\.env\.WHSEC, req\.headers, Buffer\.concat\(chunks\)\)/);
  assert.match(read('sdk/src/index.ts'), /verifyWebhook/);
  // The table of contents follows the first screen.
  assert.ok(README.indexOf('## Contents') > first.length - 200, 'a table of contents after the first screen');
});

/** GitHub's anchor of a heading: lower case, punctuation dropped (but - and _), spaces to -. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let code = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) code = !code;
    const h = !code && /^#{1,6} (.+)$/.exec(line);
    if (h) out.add(slug(h[1]));
  }
  return out;
}

/** Every markdown link target outside code blocks and spans. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]).concat([...prose.matchAll(/<(https?:\/\/[^>]+)>/g)].map((m) => m[1]));
}

test('no link of README.md or docs/*.md leaves the repository', () => {
  let checked = 0;
  for (const file of ['README.md', ...DOCS]) {
    const text = read(file);
    for (const target of links(text)) {
      checked++;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        assert.match(target, /^https?:\/\/(localhost|127\.0\.0\.1)([:/]|$)/, `${file}: ${target} leaves the repository`);
        continue;
      }
      assert.ok(!target.includes('../'), `${file}: ${target} climbs out of its folder`);
      const [filePart, anchor] = target.split('#', 2);
      const resolved = filePart ? path.join(path.dirname(path.join(ROOT, file)), filePart) : path.join(ROOT, file);
      assert.ok(resolved.startsWith(ROOT + path.sep) && existsSync(resolved), `${file}: ${target} is no file of the repository`);
      if (anchor !== undefined && resolved.endsWith('.md')) {
        assert.ok(anchors(readFileSync(resolved, 'utf8')).has(anchor), `${file}: ${target} names no heading`);
      }
    }
    // Nor is a document of the wider workspace named in prose.
    assert.doesNotMatch(text, /\.\.\/shared|CONTRACT\.md|DESIGN\.md|CONTRACT [A-D]\.\d/, `${file} names a document outside the repository`);
  }
  assert.ok(checked > 20, 'links were found');
});

test('the docs/ files exist and the README points to them', () => {
  for (const file of ['docs/operations.md', 'docs/performance.md']) assert.ok(DOCS.includes(file), file);
  // Every environment variable the configuration reads is documented in docs/operations.md.
  const ops = read('docs/operations.md');
  const config = read('src/config.ts');
  const names = new Set([...config.matchAll(/env(?:\.|, ')([A-Z][A-Z0-9_]{2,})/g)].map((m) => m[1]));
  assert.ok(names.size > 20, `${names.size} variables found`);
  for (const name of names) assert.ok(ops.includes(`\`${name}\``), `${name} is documented in docs/operations.md`);
});
