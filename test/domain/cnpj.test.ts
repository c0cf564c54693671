import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeCnpj } from '../../src/domain/cnpj.js';
import { DomainError } from '../../src/domain/errors.js';

test('numeric CNPJs normalize to 14 digits', () => {
  assert.equal(normalizeCnpj('11.222.333/0001-81'), '11222333000181');
  assert.equal(normalizeCnpj('11444777000161'), '11444777000161');
  assert.equal(normalizeCnpj(' 11 444 777 0001 61 '), '11444777000161');
  assert.equal(normalizeCnpj('00.000.000/0001-91'), '00000000000191'); // Banco do Brasil
});

test('the official alphanumeric example passes and is upper-cased', () => {
  assert.equal(normalizeCnpj('12.ABC.345/01DE-35'), '12ABC34501DE35');
  assert.equal(normalizeCnpj('12.abc.345/01de-35'), '12ABC34501DE35');
});

test('wrong check digits are rejected', () => {
  for (const s of ['11.222.333/0001-82', '11222333000191', '11444777000162', '12.ABC.345/01DE-36', '12ABC34501DE53']) {
    assert.throws(() => normalizeCnpj(s), DomainError, s);
  }
});

test('repeated-digit CNPJs are rejected even though their check digits add up', () => {
  for (let d = 0; d <= 9; d++) {
    assert.throws(() => normalizeCnpj(String(d).repeat(14)), DomainError);
  }
});

test('wrong shapes are rejected', () => {
  for (const s of [
    '',
    '1122233300018', // 13 chars
    '112223330001811', // 15 chars
    '12ABC34501DEA5', // letter in a check digit
    '12ABC345_1DE35', // not alphanumeric
    '12.ABC.345|01DE-35', // unexpected punctuation
    '12ÁBC34501DE35', // non-ASCII letter
  ]) {
    assert.throws(() => normalizeCnpj(s), DomainError, s);
  }
});

test('error message', () => {
  assert.throws(() => normalizeCnpj('123'), { message: 'must be a valid CNPJ' });
  assert.throws(() => normalizeCnpj(11222333000181 as unknown as string), DomainError);
});
