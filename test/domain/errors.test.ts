import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/domain/errors.js';

test('DomainError is an Error with its own name and the given message', () => {
  const e = new DomainError('must be a valid e-mail address');
  assert.ok(e instanceof Error);
  assert.ok(e instanceof DomainError);
  assert.equal(e.name, 'DomainError');
  assert.equal(e.message, 'must be a valid e-mail address');
});
