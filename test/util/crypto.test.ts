import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { hmacSha256With } from '../../src/util/crypto.js';

// hmacSha256With is HMAC-SHA256 written with one-shot hashes (the list cursors' MAC): the same bytes as OpenSSL's.
test('hmacSha256With gives the bytes of createHmac for short, block-sized and long keys and messages', () => {
  for (const keyLength of [0, 1, 32, 63, 64, 65, 200]) {
    const key = randomBytes(keyLength);
    const mac = hmacSha256With(key);
    for (const message of ['', 'a', 'x'.repeat(55), 'y'.repeat(64), 'é€😀 and more', JSON.stringify(['v1', 't', 'k', '/contacts']) + '\n' + 'z'.repeat(300)]) {
      assert.deepEqual(mac(message), createHmac('sha256', key).update(message).digest(), `key ${keyLength} bytes, message ${message.length} chars`);
    }
  }
});

test('hmacSha256With: one MAC does not change the next (its buffers are reused)', () => {
  const key = randomBytes(32);
  const mac = hmacSha256With(key);
  const first = mac('first message');
  mac('another message, longer than the first one by a fair amount');
  assert.deepEqual(mac('first message'), first);
  assert.deepEqual(first, createHmac('sha256', key).update('first message').digest());
});
