import { describe, expect, it } from 'vitest';
import { serverOptions } from '../../../src/server/options.js';
import { redisAddress } from '../../../src/server/rate-limit-redis.js';

describe('serverOptions', () => {
  it('takes a redis:// or rediss:// URL for the rate limits, into a frozen object', () => {
    const options = serverOptions({ rateLimitRedis: 'redis://user:pw@cache.internal:6380/2' });
    expect(options.rateLimitRedis).toBe('redis://user:pw@cache.internal:6380/2');
    expect(Object.isFrozen(options)).toBe(true);
    expect(serverOptions({ rateLimitRedis: 'rediss://cache.internal' }).rateLimitRedis).toBe(
      'rediss://cache.internal',
    );
    expect(serverOptions().rateLimitRedis).toBeUndefined();
  });

  it('refuses any other URL without repeating it (it may hold a password)', () => {
    for (const url of ['http://user:s3cret@cache:6379', 'cache:6379', 's3cret', ''])
      expect(() => serverOptions({ rateLimitRedis: url })).toThrow(
        expect.objectContaining({ name: 'RangeError', message: expect.not.stringContaining('s3cret') }),
      );
  });
});

describe('redisAddress', () => {
  it('names where a Redis URL points, without its credentials', () => {
    expect(redisAddress('redis://user:s3cret@cache.internal:6380/2')).toBe('redis://cache.internal:6380/2');
    expect(redisAddress('rediss://:s3cret@cache.internal')).toBe('rediss://cache.internal:6379');
  });
});
