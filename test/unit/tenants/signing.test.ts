import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { hmacHex, signRequest, stringToSign, unsignedTarget } from '../../../src/client/index.js';
import { ApiError } from '../../../src/contract/errors.js';
import { TokenVerifier, issueToken } from '../../../src/tenants/jwt.js';
import {
  ReplayGuard,
  VerifiedGets,
  checkSignature,
  checkTimestamp,
  signatureParams,
  signingKey,
} from '../../../src/tenants/signatures.js';

function nodeHmac(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('hex');
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return (error as ApiError).code;
  }
}

describe('the string to sign', () => {
  it('removes hmac_sign with the & before it, or after it when it comes first, and nothing else', () => {
    expect(unsignedTarget('/p?a=1&hmac_sign=ff&b=2')).toBe('/p?a=1&b=2');
    expect(unsignedTarget('/p?hmac_sign=ff&a=1')).toBe('/p?a=1');
    expect(unsignedTarget('/p?a=1&hmac_sign=ff')).toBe('/p?a=1');
    expect(unsignedTarget('/p?q=a%20b&x=%2C&hmac_sign=ff')).toBe('/p?q=a%20b&x=%2C');
    expect(unsignedTarget('/p?my_hmac_sign=1&a=2')).toBe('/p?my_hmac_sign=1&a=2');
    expect(unsignedTarget('/p?a=1&hmac_signx=2&hmac_sign=ff')).toBe('/p?a=1&hmac_signx=2');
    expect(unsignedTarget('/p?hmac_sign=ff')).toBe('/p?');
    expect(unsignedTarget('/p')).toBe('/p');
  });

  it('is the target for GET and METHOD, target, timestamp and body on lines for the rest', () => {
    expect(stringToSign('GET', '/r?hmac_timestamp=5&hmac_sign=aa', '5', '')).toBe('/r?hmac_timestamp=5');
    expect(stringToSign('POST', '/r?x=1', '5', '{"a":1}')).toBe('POST\n/r?x=1\n5\n{"a":1}');
    expect(stringToSign('DELETE', '/users/u', '5', '')).toBe('DELETE\n/users/u\n5\n');
  });
});

describe('the signing helper (nextrec/client)', () => {
  it('computes HMAC-SHA256 with Web Crypto (RFC 4231, test case 2)', async () => {
    expect(await hmacHex('Jefe', 'what do ya want for nothing?')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('signs a GET in its query: publicToken and timestamp signed, signature last', async () => {
    const signed = await signRequest({
      url: 'http://127.0.0.1:8080/recommendations/user-to-item/u%201?count=3',
      token: 'nrpub_token',
      publicToken: true,
      timestamp: 1_700_000_000,
    });
    const target =
      '/recommendations/user-to-item/u%201?count=3&publicToken=nrpub_token&hmac_timestamp=1700000000';
    expect(signed.url).toBe(`http://127.0.0.1:8080${target}&hmac_sign=${nodeHmac('nrpub_token', target)}`);
    expect(signed.headers).toEqual({});
  });

  it('signs other methods in headers over method, target, timestamp and body', async () => {
    const body = '{"items":[{"externalId":"é"}]}';
    const signed = await signRequest({
      method: 'post',
      url: '/ingestion/items',
      token: 'nrp_secret',
      body,
      timestamp: 42,
    });
    expect(signed.url).toBe('/ingestion/items');
    expect(signed.headers).toEqual({
      'X-Hmac-Timestamp': '42',
      'X-Hmac-Sign': nodeHmac('nrp_secret', `POST\n/ingestion/items\n42\n${body}`),
    });
  });
});

describe('signature checks', () => {
  const now = 1_700_000_000_000;

  it('reads the parameters where the method puts them, and refuses malformed ones', () => {
    const sign = 'a'.repeat(64);
    expect(signatureParams('GET', {}, {})).toBeUndefined();
    expect(signatureParams('GET', { hmac_timestamp: '5', hmac_sign: sign }, {})).toEqual({
      timestamp: '5',
      sign,
      publicToken: undefined,
    });
    expect(
      signatureParams('POST', {}, { 'x-hmac-timestamp': '5', 'x-hmac-sign': sign.toUpperCase() }),
    ).toEqual({
      timestamp: '5',
      sign,
      publicToken: undefined,
    });
    // A GET signs its query, so a signature in headers would leave its timestamp unsigned.
    expect(codeOf(() => signatureParams('GET', {}, { 'x-hmac-timestamp': '5', 'x-hmac-sign': sign }))).toBe(
      'SIGNATURE_INVALID',
    );
    expect(codeOf(() => signatureParams('GET', { hmac_timestamp: 'soon', hmac_sign: sign }, {}))).toBe(
      'SIGNATURE_INVALID',
    );
    expect(codeOf(() => signatureParams('GET', { hmac_timestamp: '5', hmac_sign: 'xyz' }, {}))).toBe(
      'SIGNATURE_INVALID',
    );
    expect(codeOf(() => signatureParams('GET', { publicToken: 'nrpub_x' }, {}))).toBe('SIGNATURE_INVALID');
    expect(
      codeOf(() =>
        signatureParams(
          'POST',
          { includedProperties: 'name' },
          { 'x-hmac-timestamp': '5', 'x-hmac-sign': sign },
        ),
      ),
    ).toBe('SIGNATURE_SCOPE');
  });

  it('accepts timestamps 300 s either side of the clock and no further', () => {
    expect(codeOf(() => checkTimestamp(String(now / 1000 - 300), now))).toBeUndefined();
    expect(codeOf(() => checkTimestamp(String(now / 1000 + 300), now))).toBeUndefined();
    expect(codeOf(() => checkTimestamp(String(now / 1000 - 301), now))).toBe('SIGNATURE_EXPIRED');
    expect(codeOf(() => checkTimestamp(String(now / 1000 + 301), now))).toBe('SIGNATURE_EXPIRED');
  });

  it('compares signatures of the exact message and key', () => {
    const sign = nodeHmac('key', 'message');
    expect(codeOf(() => checkSignature('key', 'message', sign))).toBeUndefined();
    expect(codeOf(() => checkSignature('key', 'message!', sign))).toBe('SIGNATURE_INVALID');
    expect(codeOf(() => checkSignature('other', 'message', sign))).toBe('SIGNATURE_INVALID');
    // An imported key signs as its token does; upper-case hex is the same signature.
    expect(codeOf(() => checkSignature(signingKey('key'), 'message', sign.toUpperCase()))).toBeUndefined();
    // Sixty-four characters that are not all hex: refused as malformed, whatever the key.
    const malformed = `${sign.slice(0, 40)}g${sign.slice(41)}`;
    let error: unknown;
    try {
      checkSignature('key', 'message', malformed);
    } catch (thrown) {
      error = thrown;
    }
    expect((error as ApiError).code).toBe('SIGNATURE_INVALID');
    expect((error as ApiError).message).toMatch(/hex HMAC-SHA256/);
    expect(codeOf(() => signatureParams('GET', { hmac_timestamp: '5', hmac_sign: `${sign}0` }, {}))).toBe(
      'SIGNATURE_INVALID',
    );
  });

  it('remembers verified GET signatures only with the key and target they verified for', () => {
    const verified = new VerifiedGets(2);
    verified.add('s1', 'key', '/a?x=1');
    expect(verified.has('s1', 'key', '/a?x=1')).toBe(true);
    expect(verified.has('s1', 'other', '/a?x=1')).toBe(false);
    expect(verified.has('s1', 'key', '/a?x=2')).toBe(false);
    expect(verified.has('s2', 'key', '/a?x=1')).toBe(false);
    verified.add('s2', 'key', '/b');
    // Full: the next one starts afresh, so the oldest needs its HMAC again.
    verified.add('s3', 'key', '/c');
    expect(verified.has('s1', 'key', '/a?x=1')).toBe(false);
    expect(verified.has('s3', 'key', '/c')).toBe(true);
  });

  it('lets each signature be used once inside its window, forgets it after, and stays bounded', () => {
    const guard = new ReplayGuard(2);
    const ts = String(now / 1000);
    guard.use('a', ts, now);
    expect(codeOf(() => guard.use('a', ts, now + 1000))).toBe('SIGNATURE_REPLAYED');
    guard.use('b', ts, now);
    let refused: unknown;
    try {
      guard.use('c', ts, now);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('RATE_LIMITED');
    expect(Number((refused as ApiError).headers?.['retry-after'])).toBe(301);
    // Once the window has passed, the timestamp check refuses a replay; the guard forgets them.
    guard.use('c', String(now / 1000 + 302), now + 302_000);
    expect(guard.size).toBe(1);
  });
});

describe('bearer tokens', () => {
  const secret = 'test-secret-0123456789';
  const now = Date.now();

  it('verifies tokens it issued, until they expire', async () => {
    const verifier = new TokenVerifier(secret);
    const issued = await issueToken(secret, 'acme', 60, now);
    expect(Date.parse(issued.expiresAt)).toBe(Math.floor(now / 1000) * 1000 + 60_000);
    expect(verifier.known(issued.token, now)).toBeUndefined();
    expect(await verifier.verify(issued.token, now)).toBe('acme');
    expect(verifier.known(issued.token, now)).toBe('acme');
    expect(verifier.known(issued.token, now + 61_000)).toBeUndefined();
    expect(await verifier.verify(issued.token, now + 61_000)).toBeUndefined();
  });

  it('refuses another key, another algorithm, a missing exp or tid, and garbage', async () => {
    const verifier = new TokenVerifier(secret);
    const key = new TextEncoder().encode(secret);
    const other = await issueToken('another-secret-0123456789', 'acme', 60, now);
    const noExp = await new SignJWT({ tid: 'acme' }).setProtectedHeader({ alg: 'HS256' }).sign(key);
    const noTid = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(key);
    const hs512 = await new SignJWT({ tid: 'acme' })
      .setProtectedHeader({ alg: 'HS512' })
      .setExpirationTime('1h')
      .sign(key);
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ tid: 'acme', exp: Math.floor(now / 1000) + 60 }),
    ).toString('base64url')}.`;
    for (const token of [other.token, noExp, noTid, hs512, unsigned, 'not-a-token']) {
      expect(await verifier.verify(token, now)).toBeUndefined();
    }
  });
});
