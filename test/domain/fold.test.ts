import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { foldText } from '../../src/domain/fold.mjs';
import { DIALECT, testApp } from '../helpers/app.js';

/** Text of many scripts and edge cases: the JS fold and the database's crm_fold must agree on each. */
export const FOLD_SAMPLES = [
  'João',
  'JOÃO',
  'ângela',
  'ÂNGELA',
  'Zoë',
  'ZOË',
  'Gonçalves',
  'GONÇALVES',
  'Ærøskøbing',
  'Łódź',
  'Straße',
  'STRASSE',
  'ẞ',
  'Οδυσσέας',
  'ΟΔΥΣΣΈΑΣ',
  'Σωκράτης',
  'άέήίόύώΐΰ',
  'Жуков',
  'ЖУКОВ',
  'Ёлка',
  'ёлка',
  'Й',
  'İstanbul',
  'ıi',
  'Đặng Thị Ngọc Hà',
  '東京',
  '北京市',
  '서울',
  'がぎぐ',
  'ｶﾞｷﾞ',
  'हिन्दी',
  'ภาษาไทย',
  'مُحَمَّد',
  'שָׁלוֹם',
  '😀 émoji 👍🏽',
  'ﬁ ﬂ',
  'Ｊｏａｏ',
  'x²',
  'ℌ',
  'Nguyễn',
  'ǅ',
  'plain ascii',
  'MiXeD 123 (11) 98765-4321',
  '',
  ' \t\n',
  'a\u0301',
  'e\u0301\u0302',
  'ŧħđøł',
  'ƀɨ',
];

test('foldText: case and accents go, every script', () => {
  const same = (a: string, b: string) => assert.equal(foldText(a), foldText(b), `${a} / ${b}`);
  same('joao', 'João');
  same('ÂNGELA', 'ângela');
  same('Zoë', 'zoë');
  same('ZOË', 'zoë');
  same('goncalves', 'Gonçalves');
  same('ΟΔΥΣΣΕΑΣ', 'Οδυσσέας'); // tonos and final sigma
  same('οδυσσεασ', 'Οδυσσέας');
  same('ЖУКОВ', 'Жуков');
  same('елка', 'Ёлка'); // Cyrillic diaeresis
  same('strasse', 'Straße');
  same('lodz', 'Łódź');
  same('istanbul', 'İstanbul');
  same('joao', 'Ｊｏａｏ'); // full-width
  same('e', 'e\u0301\u0302');
  assert.equal(foldText('João Gonçalves'), 'joao goncalves');
  assert.equal(foldText('東京 서울 北京市'), '東京 서울 北京市', 'CJK and Hangul unchanged');
  assert.equal(foldText('がぎぐ'), 'がぎぐ', 'Japanese voicing marks are kept (が is not か)');
  assert.equal(foldText('हिन्दी'), 'हिन्दी', 'Devanagari vowel signs are kept');
  assert.equal(foldText('مُحَمَّد'), 'محمد', 'Arabic harakat go');
  assert.equal(foldText('😀 ÉMOJI 👍🏽'), '😀 emoji 👍🏽', 'emoji pass through');
  assert.equal(foldText('plain ASCII 123'), 'plain ascii 123');
  assert.notEqual(foldText('joana'), foldText('joão'));
  for (const s of FOLD_SAMPLES) assert.equal(foldText(foldText(s)), foldText(s), `idempotent: ${s}`);
});

test(`crm_fold in SQL folds as foldText does (${DIALECT})`, async () => {
  const { database } = await testApp();
  for (const s of FOLD_SAMPLES) {
    const r = await sql<{ f: string }>`select crm_fold(${s}) as f`.execute(database.db);
    assert.equal(r.rows[0].f, foldText(s), `crm_fold(${JSON.stringify(s)})`);
  }
  const nul = await sql<{ f: string | null }>`select crm_fold(null) as f`.execute(database.db);
  assert.equal(nul.rows[0].f, null);
  // The read processes (SQLite) know the function too: a filter runs there.
  const reads = database.readsFor('fold-test');
  const viaPool = await reads.first(sql<{ f: string }>`select crm_fold(${'ÂNGELA Zoë'}) as f`);
  assert.equal(viaPool?.f, 'angela zoe');
});
